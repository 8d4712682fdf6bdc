package herald

import "time"

// MaintenanceWindow silences notifications of the alert type categories it names, in its
// project, between StartDate and EndDate.
type MaintenanceWindow struct {
	ID             string   `json:"id"`
	GroupID        string   `json:"groupId"`
	Created        Time     `json:"created"`
	Updated        Time     `json:"updated"`
	StartDate      Time     `json:"startDate"`
	EndDate        Time     `json:"endDate"`
	AlertTypeNames []string `json:"alertTypeNames"`
	Description    string   `json:"description,omitempty"`
}

// Visible reports whether the window can still be read and changed at now: its end is in the
// future.
func (w MaintenanceWindow) Visible(now time.Time) bool { return w.EndDate.After(now) }

// MaintenanceWindowInput is a window as a create or update request carries it.
type MaintenanceWindowInput struct {
	AlertTypeNames []string `json:"alertTypeNames"`
	StartDate      *Time    `json:"startDate"`
	EndDate        *Time    `json:"endDate"`
	Description    *string  `json:"description"`
}

// Empty reports whether the request names no field (an update must name one).
func (in MaintenanceWindowInput) Empty() bool {
	return in.AlertTypeNames == nil && in.StartDate == nil && in.EndDate == nil && in.Description == nil
}

// Apply validates in and applies it to w: everything required when creating, only what is
// given when updating. The window must end after it starts and end in the future.
func (in MaintenanceWindowInput) Apply(w *MaintenanceWindow, creating bool, now time.Time) error {
	if creating {
		switch {
		case in.AlertTypeNames == nil:
			return MissingAttribute("alertTypeNames")
		case in.StartDate == nil:
			return MissingAttribute("startDate")
		case in.EndDate == nil:
			return MissingAttribute("endDate")
		}
	} else if in.Empty() {
		return Errorf(KindInvalid, CodeMissingAttribute, []any{"alertTypeNames"},
			"At least one of alertTypeNames, startDate, endDate and description must be given.")
	}
	if in.AlertTypeNames != nil {
		if len(in.AlertTypeNames) == 0 {
			return InvalidAttribute("alertTypeNames", "alertTypeNames must name at least one alert type.")
		}
		for _, t := range in.AlertTypeNames {
			if !ValidMaintenanceAlertType(t) {
				return NotOneOf("alertTypeNames", t, MaintenanceAlertTypes(), "Unknown alert type %s.", t)
			}
		}
		w.AlertTypeNames = dedupe(in.AlertTypeNames)
	}
	if in.StartDate != nil {
		w.StartDate = *in.StartDate
	}
	if in.EndDate != nil {
		w.EndDate = *in.EndDate
	}
	if in.Description != nil {
		w.Description = *in.Description
	}
	if !w.StartDate.Before(w.EndDate.Time) {
		return Errorf(KindInvalid, CodeWindowStartAfterEnd, []any{w.StartDate.String(), w.EndDate.String()},
			"The start date %s is not before the end date %s.", w.StartDate, w.EndDate)
	}
	if !w.EndDate.After(now) {
		return InvalidAttribute("endDate", "endDate must be in the future.")
	}
	return nil
}

// Silences reports whether the window silences notifications of an alert of the given
// category at now.
func (w MaintenanceWindow) Silences(c Category, now time.Time) bool {
	if now.Before(w.StartDate.Time) || !now.Before(w.EndDate.Time) {
		return false
	}
	return contains(w.AlertTypeNames, string(c))
}
