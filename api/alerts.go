package api

import (
	"context"
	"net/http"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// globalAlertPath is the path of a global alert.
func globalAlertPath(a herald.Alert) string { return "/globalAlerts/" + a.ID }

// alertStatus reads the optional status filter of an alert list.
func (c *call) alertStatus() (string, error) {
	status := c.r.URL.Query().Get("status")
	if status != "" && !herald.ValidAlertStatus(status) {
		return "", herald.Invalid(herald.CodeInvalidQueryParameter, "status",
			"Query parameter status must be one of TRACKING, OPEN, CLOSED, CANCELLED.")
	}
	return status, nil
}

// maxAckCommentLength bounds an acknowledgement comment (in characters): it is a note to the
// other people on call, shown with the alert, not a place for a log.
const maxAckCommentLength = 200

// ackRequest is the body of an acknowledgement.
type ackRequest struct {
	AcknowledgedUntil      *herald.Time `json:"acknowledgedUntil"`
	AcknowledgementComment *string      `json:"acknowledgementComment"`
}

// acknowledge applies this call's acknowledgement request to alert id (global, or of the
// project of scope) and records, in the same transaction, the event it makes in scope.
func (c *call) acknowledge(global bool, scope herald.Scope, id string) (herald.Alert, error) {
	var in ackRequest
	if err := c.decode(&in); err != nil {
		return herald.Alert{}, err
	}
	if in.AcknowledgedUntil == nil {
		return herald.Alert{}, herald.MissingAttribute("acknowledgedUntil")
	}
	if err := herald.CheckRequestTime("acknowledgedUntil", in.AcknowledgedUntil, false, c.now); err != nil {
		return herald.Alert{}, err
	}
	var comment string
	if in.AcknowledgementComment != nil {
		comment = *in.AcknowledgementComment
	}
	if utf8.RuneCountInString(comment) > maxAckCommentLength {
		return herald.Alert{}, herald.InvalidAttribute("acknowledgementComment",
			"acknowledgementComment must be at most %d characters.", maxAckCommentLength)
	}
	who := c.who.Username
	if who == "" {
		who = c.who.PublicKey
	}
	return c.s.applyAck(c.ctx, ackChange{global: global, scope: scope, id: id, until: *in.AcknowledgedUntil,
		comment: comment, who: who, now: c.now, event: func(typ string) herald.Event { return c.event(typ, scope) }})
}

// ackChange is one acknowledgement of an alert, or its withdrawal (until not after now): from
// the API, or from a notice's link or reply.
type ackChange struct {
	global  bool
	scope   herald.Scope
	id      string
	until   herald.Time
	comment string
	who     string // the name the acknowledgement carries
	now     time.Time
	// event is the audit event of type typ, before the alert's fields are added.
	event func(typ string) herald.Event
	// kept, when not nil, leaves an alert acknowledged at now as it is (a second press of a
	// notice's button) and says so.
	kept *bool
}

// applyAck applies ack to its alert and records, in the same transaction, the event it makes.
// Withdrawing an acknowledgement nobody made changes nothing and records nothing. The engine
// is told, to look at the alert again when the acknowledgement expires.
func (s *Server) applyAck(ctx context.Context, ack ackChange) (herald.Alert, error) {
	var told string // the transition, for the log once committed
	a, err := s.store.UpdateAlert(ctx, ack.global, ack.scope.GroupID, ack.id, func(a *herald.Alert) ([]herald.Event, error) {
		told = ""
		before := *a
		if ack.kept != nil {
			*ack.kept = herald.Active(before.Status) && before.Acknowledged(ack.now) && ack.until.After(ack.now)
			if *ack.kept {
				return nil, nil
			}
		}
		acknowledged, err := a.Acknowledge(ack.until, ack.comment, ack.who, ack.now)
		if err != nil {
			return nil, err
		}
		typ := herald.EventAlertAcknowledged
		if !acknowledged {
			if !before.Acknowledged(ack.now) {
				*a = before
				return nil, nil
			}
			typ = herald.EventAlertUnacknowledged
		}
		told = "alert acknowledged"
		if !acknowledged {
			told = "alert acknowledgement withdrawn"
		}
		ev := ack.event(typ)
		ev.AlertID, ev.AlertConfigID = a.ID, a.AlertConfigID
		if acknowledged {
			ev.Raw["acknowledgedUntil"] = a.AcknowledgedUntil.String()
		}
		return []herald.Event{ev}, nil
	})
	if err != nil {
		return a, err
	}
	if told != "" {
		// The engine logs every other transition of an alert (dispatch/story.go); this one is the API's.
		s.log.Info(told, zap.String("groupId", a.GroupID), zap.String("alertId", a.ID), zap.String("alertConfigId", a.AlertConfigID),
			zap.String("eventTypeName", a.EventTypeName), zap.Bool("global", ack.global), zap.String("acknowledgedUntil", a.AcknowledgedUntil.String()),
			zap.String("by", ack.who))
	}
	return a, s.engine.Acknowledged(ctx, a, ack.global)
}

// GET /groups/{groupId}/alerts: the project's alerts, newest first, optionally of one status.
func (s *Server) listAlerts(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.Alert, int, error) {
		status, err := c.alertStatus()
		if err != nil {
			return nil, 0, err
		}
		return s.store.Alerts(c.ctx, p.ID, store.AlertFilter{Status: status}, pg)
	}, alertPath)
}

// GET /groups/{groupId}/alerts/{alertId}
func (s *Server) getAlert(c *call) (reply, error) {
	read := store.ReadProjectAlert(c.param("groupId"), c.param("alertId"))
	if err := c.fetch(read); err != nil { // one round trip, the authentication check's
		return reply{}, err
	}
	found, err := read.Decode()
	p, a := read.Project(), read.Alert() // as the read holds them: no copies
	if !found {
		_, err := c.authorizeProject(herald.ReadProject, *p, err)
		return reply{}, err
	}
	if _, err := c.authorizeProject(herald.ReadProject, *p, nil); err != nil {
		return reply{}, err
	}
	if err != nil {
		return reply{}, err
	}
	// The answer polled most: encoded once for the documents read, as long as they and the
	// alert's link do not change (store.ProjectAlertRead.Encoded).
	self := c.url(alertPath(*a))
	body, err := read.Encoded(self, func(a *herald.Alert) ([]byte, error) { return withLinks(a, self) })
	if err != nil {
		return reply{}, err
	}
	return reply{status: http.StatusOK, body: body}, nil
}

// PATCH /groups/{groupId}/alerts/{alertId}: acknowledge, or un-acknowledge with a past time.
func (s *Server) acknowledgeAlert(c *call) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	a, err := c.acknowledge(false, p.Scope(), c.param("alertId"))
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, a, alertPath(a)), nil
}

// GET /globalAlerts: global alerts, newest first, filtered by status and creation time.
func (s *Server) listGlobalAlerts(c *call) (reply, error) {
	if err := c.require(herald.MonitorGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.Alert, int, error) {
		var f store.AlertFilter
		var err error
		if f.Status, err = c.alertStatus(); err != nil {
			return nil, 0, err
		}
		if f.Created.Min, err = c.queryTime("createdOnOrAfter"); err != nil {
			return nil, 0, err
		}
		if f.Created.Max, err = c.queryTime("createdOnOrBefore"); err != nil {
			return nil, 0, err
		}
		return s.store.GlobalAlerts(c.ctx, f, pg)
	}, globalAlertPath)
}

// GET /globalAlerts/{alertId}
func (s *Server) getGlobalAlert(c *call) (reply, error) {
	if err := c.require(herald.MonitorGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	a, err := s.store.GlobalAlert(c.ctx, c.param("alertId"))
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, a, globalAlertPath(a)), nil
}

// PATCH /globalAlerts/{alertId}: as for a project alert, but answered 201 as the document says.
func (s *Server) acknowledgeGlobalAlert(c *call) (reply, error) {
	if err := c.require(herald.MonitorGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	a, err := c.acknowledge(true, herald.Scope{}, c.param("alertId"))
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusCreated, a, globalAlertPath(a)), nil
}
