//go:build sessfix_faults

package faultpoint

func init() { Enable() }
