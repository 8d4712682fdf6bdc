package main

import "runtime/debug"

// Set at build time: go build -ldflags "-X main.version=1.2.3 -X main.gitHash=$(git rev-parse HEAD)".
// Without them the version control data Go stamps into builds (go build -buildvcs) is used.
var (
	version = ""
	gitHash = ""
)

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func buildGitHash() string {
	if gitHash != "" {
		return gitHash
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
