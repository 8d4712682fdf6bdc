package store

import (
	"sync/atomic"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/memo"
)

// polledReads are the keys of the project alerts this process read lately (ReadProjectAlert),
// the documents it last decoded of each, and the caller's last encoding of the alert. Agents
// and dashboards poll the same alerts again and again: each read made the same three keys
// (and go-redis's arguments of them), decoded the same two documents, which rarely change
// between polls, and encoded the same answer. What was decoded is used again only for
// documents byte for byte those it was decoded from, and an encoding only with the same
// lastNotified and tag besides, so a read answers what decoding and encoding its own
// documents answers.
var polledReads polledMemo

// maxPolled bounds polledReads: past it, everything is forgotten at once.
const maxPolled = 4096

type polledMemo struct {
	m memo.Map[polledPair, *polledAlert]
}

// polledPair is a project and one of its alerts, both ids of herald's form.
type polledPair struct{ groupID, id string }

// polledAlert is what a read of a polledPair needs made once: its commands' arguments (shared
// by concurrent reads: go-redis only reads a command's arguments), and the documents last
// decoded.
type polledAlert struct {
	mget []any // "mget", the project's document and the alert's
	hget []any // "hget", the alert's reach hash and its lastNotified field
	last atomic.Pointer[polledDocs]
}

// polledDocs are a project's and an alert's documents as read, with what they decoded to
// (the alert without the lastNotified of its reach hash) and the last encoding a caller made
// of the alert (ProjectAlertRead.Encoded). Read only once made but for encoded: the values'
// slices and maps are shared by every read that uses them.
type polledDocs struct {
	projectText, alertText string
	project                herald.Project
	alert                  herald.Alert
	encoded                atomic.Pointer[polledEncoding]
}

// polledEncoding is a caller's encoding of an alert as decoded from its polledDocs, with
// lastNotified the reach hash's field as read (the HGET's reply, "" for none), for the tag it
// gave.
type polledEncoding struct {
	tag, notified string
	bytes         []byte
}

// of is what reads of alert id of project groupID share, made once.
func (f *polledMemo) of(groupID, id string) *polledAlert {
	return f.m.Get(polledPair{groupID, id}, maxPolled, makePolledAlert)
}

func makePolledAlert(p polledPair) *polledAlert {
	// Every slice full (length = capacity): should anything append to one, it copies.
	return &polledAlert{mget: []any{"mget", projectDoc(p.groupID), alerts(p.groupID).doc(p.id)},
		hget: []any{"hget", Scope{GroupID: p.groupID}.reach(p.id), notifiedField}}
}

// decoded copies into project and alert what was decoded of docs (an MGET's answer of the
// project's document and the alert's), if those were the documents last decoded, and returns
// them (nil when they were not).
func (p *polledAlert) decoded(docs []any, project *herald.Project, alert *herald.Alert) *polledDocs {
	last := p.last.Load()
	if last == nil || len(docs) != 2 {
		return nil
	}
	pt, ok1 := docs[0].(string)
	at, ok2 := docs[1].(string)
	if !ok1 || !ok2 || pt != last.projectText || at != last.alertText {
		return nil
	}
	*project, *alert = last.project, last.alert
	return last
}

// keep records what docs decoded to, for the reads after, and returns the record (nil when
// docs are not both documents).
func (p *polledAlert) keep(docs []any, project herald.Project, alert herald.Alert) *polledDocs {
	pt, ok1 := docs[0].(string)
	at, ok2 := docs[1].(string)
	if !ok1 || !ok2 {
		return nil
	}
	d := &polledDocs{projectText: pt, alertText: at, project: project, alert: alert}
	p.last.Store(d)
	return d
}
