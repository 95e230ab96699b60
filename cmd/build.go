package cmd

import (
	"runtime"
	"runtime/debug"

	"github.com/sessfix/sessfix/cmd/internal/cli"
)

// Set by release builds:
//
//	go build -ldflags "-X github.com/sessfix/sessfix/cmd.version=1.2.3
//	  -X github.com/sessfix/sessfix/cmd.commit=abc1234
//	  -X github.com/sessfix/sessfix/cmd.date=2026-01-02T03:04:05Z"
var (
	version = ""
	commit  = ""
	date    = ""
)

// Build returns the build information: the linker's values, else the
// module version and VCS stamp Go recorded, else "dev".
func Build() cli.BuildInfo {
	return buildInfo(version, commit, date, debug.ReadBuildInfo)
}

func buildInfo(v, c, d string, read func() (*debug.BuildInfo, bool)) cli.BuildInfo {
	b := cli.BuildInfo{Version: v, Commit: c, Date: d, GoVersion: runtime.Version()}
	if info, ok := read(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if c == "" && len(b.Commit) > 12 {
			b.Commit = b.Commit[:12]
		}
		if c == "" && modified && b.Commit != "" {
			b.Commit += "-dirty"
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	return b
}
