package herald

// ActionLinks are the signed links a notice meant for people carries, to act on its alert
// without an API key. Empty fields are links the notice does not offer; all are empty when
// the operator set no action keys. In a webhook's body they are its `links` object.
type ActionLinks struct {
	View          string `json:"view,omitempty"`
	Acknowledge1h string `json:"acknowledge1h,omitempty"`
	Acknowledge4h string `json:"acknowledge4h,omitempty"`
	Unacknowledge string `json:"unacknowledge,omitempty"`
}

// Empty reports whether l offers no link.
func (l ActionLinks) Empty() bool { return l == ActionLinks{} }
