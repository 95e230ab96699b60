// Package scan is the `sessfix scan` command: find the stores, run the rules
// over every session and print the findings. It parses flags into
// ScanOptions and leaves the work to pkg/store, pkg/scan and pkg/report.
package scan
