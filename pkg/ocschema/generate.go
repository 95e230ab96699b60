package ocschema

//go:generate go run ../../internal/opencodetest/ocschemagen/cmd/ocschemagen -dir .
