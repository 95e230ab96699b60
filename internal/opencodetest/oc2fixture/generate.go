package oc2fixture

//go:generate go run ./cmd/oc2fixture -out ../../../testdata/opencode2 -base ../../../testdata/real/opencode-1.18.33/opencode.db
