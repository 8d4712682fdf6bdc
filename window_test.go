package herald

import (
	"slices"
	"testing"
	"time"
)

func TestMaintenanceWindowInputApply(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *Time { v := At(now.Add(d)); return &v }
	desc := "upgrade"
	stored := MaintenanceWindow{StartDate: *at(time.Hour), EndDate: *at(2 * time.Hour), AlertTypeNames: []string{"HOST"}, Description: "old"}

	tests := []struct {
		name     string
		in       MaintenanceWindowInput
		creating bool
		code     string // "" when the input is accepted
		param    string
		want     MaintenanceWindow // checked when accepted
	}{
		{name: "create", creating: true,
			in:   MaintenanceWindowInput{AlertTypeNames: []string{"HOST", "BACKUP", "HOST"}, StartDate: at(time.Hour), EndDate: at(2 * time.Hour), Description: &desc},
			want: MaintenanceWindow{StartDate: *at(time.Hour), EndDate: *at(2 * time.Hour), AlertTypeNames: []string{"HOST", "BACKUP"}, Description: "upgrade"}},
		{name: "create starting in the past", creating: true,
			in:   MaintenanceWindowInput{AlertTypeNames: []string{"AGENT"}, StartDate: at(-time.Hour), EndDate: at(time.Hour)},
			want: MaintenanceWindow{StartDate: *at(-time.Hour), EndDate: *at(time.Hour), AlertTypeNames: []string{"AGENT"}}},
		{name: "create without alertTypeNames", creating: true, code: CodeMissingAttribute, param: "alertTypeNames",
			in: MaintenanceWindowInput{StartDate: at(time.Hour), EndDate: at(2 * time.Hour)}},
		{name: "create without startDate", creating: true, code: CodeMissingAttribute, param: "startDate",
			in: MaintenanceWindowInput{AlertTypeNames: []string{"HOST"}, EndDate: at(2 * time.Hour)}},
		{name: "create without endDate", creating: true, code: CodeMissingAttribute, param: "endDate",
			in: MaintenanceWindowInput{AlertTypeNames: []string{"HOST"}, StartDate: at(time.Hour)}},
		{name: "no alert type", creating: true, code: CodeInvalidAttribute, param: "alertTypeNames",
			in: MaintenanceWindowInput{AlertTypeNames: []string{}, StartDate: at(time.Hour), EndDate: at(2 * time.Hour)}},
		{name: "unknown alert type", creating: true, code: CodeInvalidEnumValue, param: "alertTypeNames",
			in: MaintenanceWindowInput{AlertTypeNames: []string{"HOST", "HOST_DOWN"}, StartDate: at(time.Hour), EndDate: at(2 * time.Hour)}},
		{name: "start after end", creating: true, code: CodeWindowStartAfterEnd, param: At(now.Add(3 * time.Hour)).String(),
			in: MaintenanceWindowInput{AlertTypeNames: []string{"HOST"}, StartDate: at(3 * time.Hour), EndDate: at(2 * time.Hour)}},
		{name: "start at end", creating: true, code: CodeWindowStartAfterEnd, param: At(now.Add(time.Hour)).String(),
			in: MaintenanceWindowInput{AlertTypeNames: []string{"HOST"}, StartDate: at(time.Hour), EndDate: at(time.Hour)}},
		{name: "ending now", creating: true, code: CodeInvalidAttribute, param: "endDate",
			in: MaintenanceWindowInput{AlertTypeNames: []string{"HOST"}, StartDate: at(-time.Hour), EndDate: at(0)}},
		{name: "update nothing", code: CodeMissingAttribute, param: "alertTypeNames"},
		{name: "update description only", in: MaintenanceWindowInput{Description: &desc},
			want: MaintenanceWindow{StartDate: *at(time.Hour), EndDate: *at(2 * time.Hour), AlertTypeNames: []string{"HOST"}, Description: "upgrade"}},
		{name: "update start past the stored end", code: CodeWindowStartAfterEnd, param: At(now.Add(3 * time.Hour)).String(),
			in: MaintenanceWindowInput{StartDate: at(3 * time.Hour)}},
		{name: "update end into the past", code: CodeWindowStartAfterEnd, param: At(now.Add(time.Hour)).String(),
			in: MaintenanceWindowInput{EndDate: at(-time.Hour)}},
		{name: "update to a window already over", code: CodeInvalidAttribute, param: "endDate",
			in: MaintenanceWindowInput{StartDate: at(-3 * time.Hour), EndDate: at(-time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w MaintenanceWindow
			if !tt.creating {
				w = stored
				w.AlertTypeNames = slices.Clone(stored.AlertTypeNames)
			}
			err := tt.in.Apply(&w, tt.creating, now)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				if !w.StartDate.Equal(tt.want.StartDate.Time) || !w.EndDate.Equal(tt.want.EndDate.Time) ||
					!slices.Equal(w.AlertTypeNames, tt.want.AlertTypeNames) || w.Description != tt.want.Description {
					t.Fatalf("window %+v, want %+v", w, tt.want)
				}
				return
			}
			e := ErrorOf(err)
			if e == nil || e.Kind != KindInvalid || e.Code != tt.code || len(e.Parameters) == 0 || e.Parameters[0] != tt.param {
				t.Fatalf("Apply error %v (%#v), want %s naming %s", err, e, tt.code, tt.param)
			}
		})
	}
}

func TestMaintenanceWindowVisibleAndSilences(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	w := MaintenanceWindow{StartDate: At(start), EndDate: At(start.Add(time.Hour)), AlertTypeNames: []string{"HOST", "AGENT"}}
	end := w.EndDate.Time
	for _, tt := range []struct {
		now               time.Time
		cat               Category
		visible, silences bool
	}{
		{start.Add(-time.Second), CategoryHost, true, false},
		{start, CategoryHost, true, true},
		{start, CategoryReplicaSet, true, false},
		{end.Add(-time.Nanosecond), CategoryAgent, true, true},
		{end, CategoryHost, false, false},
		{end.Add(time.Second), CategoryHost, false, false},
	} {
		if got := w.Visible(tt.now); got != tt.visible {
			t.Errorf("Visible(%s) = %v, want %v", tt.now, got, tt.visible)
		}
		if got := w.Silences(tt.cat, tt.now); got != tt.silences {
			t.Errorf("Silences(%s, %s) = %v, want %v", tt.cat, tt.now, got, tt.silences)
		}
	}
}
