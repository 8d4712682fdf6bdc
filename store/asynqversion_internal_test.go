package store

import (
	"runtime/debug"
	"strings"
	"testing"
)

// A worker starts only in a binary built with the asynq its reclaimer was tested with, as the
// binary's build information names it (replaced or not); a binary without module versions (a
// test's) is not refused.
func TestCheckAsynqVersion(t *testing.T) {
	other := &debug.Module{Path: "golang.org/x/sys", Version: "v0.48.0"}
	for _, tc := range []struct {
		name   string
		deps   []*debug.Module
		refuse string // in the error; "" when it starts
	}{
		{"the version tested", []*debug.Module{other, {Path: asynqModule, Version: asynqVersion}}, ""},
		{"a later version", []*debug.Module{{Path: asynqModule, Version: "v0.27.0"}}, asynqModule + " v0.27.0"},
		{"an earlier version", []*debug.Module{{Path: asynqModule, Version: "v0.25.1"}}, "v0.25.1"},
		{"replaced by the version tested", []*debug.Module{{Path: asynqModule, Version: "v0.24.0",
			Replace: &debug.Module{Path: asynqModule, Version: asynqVersion}}}, ""},
		{"replaced by a directory", []*debug.Module{{Path: asynqModule, Version: asynqVersion,
			Replace: &debug.Module{Path: "../asynq"}}}, "built with ../asynq,"},
		{"replaced by a fork", []*debug.Module{{Path: asynqModule, Version: asynqVersion,
			Replace: &debug.Module{Path: "example.com/fork/asynq", Version: asynqVersion}}}, "example.com/fork/asynq"},
		{"without asynq", []*debug.Module{other}, "built without"},
		{"no module versions", nil, ""},
	} {
		err := checkAsynqVersion(tc.deps)
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.refuse != "" && err == nil:
			t.Errorf("%s: not refused", tc.name)
		case tc.refuse != "" && (!strings.Contains(err.Error(), tc.refuse) || !strings.Contains(err.Error(), asynqVersion)):
			t.Errorf("%s: %q names neither %q nor the version tested", tc.name, err, tc.refuse)
		}
	}
}
