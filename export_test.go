package herald

// EventWordsTable is the table of event types' words, for the test that every type has some.
func EventWordsTable() map[string]string { return eventWords }
