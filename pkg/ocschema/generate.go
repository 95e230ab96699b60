package ocschema

//go:generate go run ../../internal/ocschemagen/cmd/ocschemagen -dir .
