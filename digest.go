package herald

// Digest is one message that told a target about several alerts at once, during a storm.
// The notices it stands for are recorded DIGESTED with its ID; its page lists every entry.
type Digest struct {
	ID        string        `json:"id"`        // a new id: the digest's delivery id and its page's
	GroupID   string        `json:"groupId"`   // the project of its alerts
	Kind      string        `json:"typeName"`  // the kind it went by: EMAIL, SMS, CHAT_A, CHAT_B, CHAT_C
	Recipient string        `json:"recipient"` // whom it reached, as action links name it
	Created   Time          `json:"created"`
	Entries   []DigestEntry `json:"entries"` // most important first
}

// DigestEntry is one notice a digest stands for: an alert's opening, or its resolution.
type DigestEntry struct {
	AlertID string `json:"alertId"`
	Global  bool   `json:"global,omitempty"`
	Ended   bool   `json:"ended,omitempty"` // a resolution
}
