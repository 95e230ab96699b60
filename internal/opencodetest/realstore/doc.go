// Package realstore gives tests copies of the stores real OpenCode recorded
// (testdata/real), broken the way the end-to-end scenarios (package e2e)
// break them, and carrying the failed attempt OpenCode stores when the
// provider rejects a resume: a user message ("continue") and an assistant
// message whose error is the provider's text, in the shape OpenCode 1.1.65
// and 1.18.33 write them (internal/opencodetest/OBSERVED.md).
//
// Tests that need the provider's verdict use the end-to-end suite, which
// runs real OpenCode; these copies give the package tests the same records
// without it.
package realstore
