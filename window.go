package herald

import "time"

// MaintenanceWindow silences notifications of the alert type categories it names, in its
// project, between StartDate and EndDate. A window that carries label matchers (an
// Alertmanager silence, made through the Prometheus front door) silences instead the alerts
// whose labels satisfy every matcher, whatever their category.
type MaintenanceWindow struct {
	ID             string   `json:"id"`
	GroupID        string   `json:"groupId"`
	Created        Time     `json:"created"`
	Updated        Time     `json:"updated"`
	StartDate      Time     `json:"startDate"`
	EndDate        Time     `json:"endDate"`
	AlertTypeNames []string `json:"alertTypeNames"`
	Description    string   `json:"description,omitempty"`
	// Matchers, when any, select the alerts the window silences by their labels (the window is
	// then a silence: Description is its comment, CreatedBy who made it).
	Matchers  []LabelMatcher `json:"matchers,omitempty"`
	CreatedBy string         `json:"createdBy,omitempty"`
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
// given when updating. The window must end after it starts and end in the future, and its
// dates be from EarliestRequestTime on.
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
	if err := CheckRequestTime("startDate", in.StartDate, false, now); err != nil {
		return err
	}
	if err := CheckRequestTime("endDate", in.EndDate, false, now); err != nil {
		return err
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
// category, without labels, at now.
func (w MaintenanceWindow) Silences(c Category, now time.Time) bool {
	return w.SilencesAlert(c, nil, now)
}

// SilencesAlert reports whether the window silences notifications of an alert of the given
// category and labels at now: a window with matchers silences the alerts whose labels satisfy
// them all (never an alert without labels: a silence's matchers cannot all match the empty
// label set, ValidateSilenceMatchers), one without silences its categories.
func (w MaintenanceWindow) SilencesAlert(c Category, labels Labels, now time.Time) bool {
	if !w.InEffect(now) {
		return false
	}
	if len(w.Matchers) > 0 {
		return len(labels) > 0 && MatchAll(w.Matchers, labels)
	}
	return contains(w.AlertTypeNames, string(c))
}

// InEffect reports whether now is within the window: from StartDate, before EndDate.
func (w MaintenanceWindow) InEffect(now time.Time) bool {
	return !now.Before(w.StartDate.Time) && now.Before(w.EndDate.Time)
}

// ValidateSilenceMatchers checks a silence's matchers (each already valid) as Alertmanager
// does: at least one, and at least one that does not match the empty string, so that a silence
// never silences everything (nor an alert without labels).
func ValidateSilenceMatchers(ms []LabelMatcher) error {
	if len(ms) == 0 {
		return MissingAttribute("matchers")
	}
	for _, m := range ms {
		if !m.Matches(Labels{}) {
			return nil
		}
	}
	return InvalidAttribute("matchers", "At least one matcher must not match the empty string: these would silence every alert.")
}
