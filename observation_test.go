package herald

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestObservationValidate(t *testing.T) {
	yes := true
	num := func(v float64) *float64 { return &v }
	condition := Observation{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "h1"}
	measurement := Observation{MetricName: "CONNECTIONS", Value: num(3), Units: "RAW", HostID: "h1"}
	with := func(o Observation, change func(*Observation)) Observation { change(&o); return o }

	for _, o := range []Observation{
		condition,
		measurement,
		with(measurement, func(o *Observation) { o.EventTypeName = "OUTSIDE_METRIC_THRESHOLD" }),
		with(condition, func(o *Observation) { o.HostID, o.ReplicaSetName = "", "rs0" }),
		with(condition, func(o *Observation) { o.Disks = []Disk{{"sda1"}, {"/dev/sdb"}, {"C:"}} }),
		with(condition, func(o *Observation) { o.HostID = "db-1.example.com_27017" }),
		with(condition, func(o *Observation) { o.CurrentValue = &CurrentValue{Number: 4, Units: "RAW"} }),
	} {
		if err := o.Validate(0); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}

	for _, tc := range []struct {
		o           Observation
		code, field string
	}{
		{Observation{Active: &yes, HostID: "h1"}, CodeMissingAttribute, "eventTypeName"},
		{with(condition, func(o *Observation) { o.EventTypeName = "NO_SUCH_TYPE" }), CodeInvalidObservation, "eventTypeName"},
		{with(condition, func(o *Observation) { o.EventTypeName = "OUTSIDE_METRIC_THRESHOLD" }), CodeMissingAttribute, "metricName"},
		{with(condition, func(o *Observation) { o.Active = nil }), CodeMissingAttribute, "active"},
		{with(condition, func(o *Observation) { o.Value = num(1) }), CodeInvalidObservation, "value"},
		{with(condition, func(o *Observation) { o.Units = "RAW" }), CodeInvalidObservation, "units"},
		{with(condition, func(o *Observation) { o.HostID = "" }), CodeMissingAttribute, "hostId"},
		{with(measurement, func(o *Observation) { o.EventTypeName = "HOST_DOWN" }), CodeInvalidObservation, "eventTypeName"},
		{with(measurement, func(o *Observation) { o.Active = &yes }), CodeInvalidObservation, "active"},
		{with(measurement, func(o *Observation) { o.MetricName = "NO_SUCH_METRIC" }), CodeInvalidObservation, "metricName"},
		{with(measurement, func(o *Observation) { o.Value = nil }), CodeMissingAttribute, "value"},
		{with(measurement, func(o *Observation) { o.Value = num(math.Inf(1)) }), CodeInvalidObservation, "value"},
		{with(measurement, func(o *Observation) { o.Units = "" }), CodeMissingAttribute, "units"},
		{with(measurement, func(o *Observation) { o.Units = "FURLONGS" }), CodeInvalidObservation, "units"},
		{with(measurement, func(o *Observation) { o.Units = "SECONDS" }), CodeInvalidObservation, "units"},
		{with(measurement, func(o *Observation) { o.HostID = "" }), CodeMissingAttribute, "hostId"},
		{with(condition, func(o *Observation) { o.CurrentValue = &CurrentValue{Units: "FURLONGS"} }), CodeInvalidObservation, "currentValue.units"},
		{with(condition, func(o *Observation) { o.TypeName = "MAINFRAME" }), CodeInvalidObservation, "typeName"},
		{with(condition, func(o *Observation) { o.HostID = "h1:disks" }), CodeInvalidObservation, "hostId"},
		{with(condition, func(o *Observation) { o.HostID = ".." }), CodeInvalidObservation, "hostId"},
		{with(condition, func(o *Observation) { o.HostID = strings.Repeat("h", 129) }), CodeInvalidObservation, "hostId"},
		{with(condition, func(o *Observation) { o.HostID, o.ReplicaSetName, o.Disks = "", "rs0", []Disk{{"sda1"}} }), CodeMissingAttribute, "hostId"},
		{with(condition, func(o *Observation) { o.Disks = []Disk{{"sda1"}, {""}} }), CodeMissingAttribute, "disks[1].partitionName"},
		{with(condition, func(o *Observation) { o.Disks = []Disk{{"sda\x001"}} }), CodeInvalidObservation, "disks[0].partitionName"},
		{with(condition, func(o *Observation) { o.Disks = []Disk{{"sda\xff"}} }), CodeInvalidObservation, "disks[0].partitionName"},
		{with(condition, func(o *Observation) { o.Disks = []Disk{{strings.Repeat("p", 257)}} }), CodeInvalidObservation, "disks[0].partitionName"},
	} {
		err := ErrorOf(tc.o.Validate(7))
		if err == nil || err.Kind != KindInvalid || err.Code != tc.code || fmt.Sprint(err.Parameters) != fmt.Sprint([]any{7, tc.field}) {
			t.Errorf("%+v: got %v, want %s naming item 7 and %s", tc.o, err, tc.code, tc.field)
		}
	}
}

func TestHostsOf(t *testing.T) {
	yes := true
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s string) *Time { v, _ := ParseTime(s); return &v }
	obs := []Observation{
		{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "a", HostnameAndPort: "a.example.com:27017", TypeName: "PRIMARY",
			At: at("2026-03-01T13:00:00Z"), Disks: []Disk{{"sda1"}, {"sdb"}}},
		{EventTypeName: "NO_PRIMARY", Active: &yes, ReplicaSetName: "rs0"}, // names no host
		{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "b", At: at("2026-02-01T00:00:00Z")},
		{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "a", TypeName: "SECONDARY", ReplicaSetName: "rs0",
			At: at("2026-03-01T11:00:00Z"), Disks: []Disk{{"sdb"}, {"sdc"}}},
	}
	hosts, disks := HostsOf("g1", obs, now)
	want := []Host{
		// Seen last at its latest time; described by its last items that describe it.
		{ID: "a", GroupID: "g1", HostnameAndPort: "a.example.com:27017", TypeName: "SECONDARY", ReplicaSetName: "rs0", LastSeen: *at("2026-03-01T13:00:00Z")},
		{ID: "b", GroupID: "g1", LastSeen: *at("2026-02-01T00:00:00Z")},
	}
	if !reflect.DeepEqual(hosts, want) {
		t.Errorf("hosts = %+v\nwant    %+v", hosts, want)
	}
	if wantDisks := map[string][]string{"a": {"sda1", "sdb", "sdc"}}; !reflect.DeepEqual(disks, wantDisks) {
		t.Errorf("disks = %v, want %v", disks, wantDisks)
	}

	hosts, _ = HostsOf("g1", []Observation{{EventTypeName: "HOST_DOWN", Active: &yes, HostID: "c"}}, now.Add(500*time.Millisecond))
	if len(hosts) != 1 || !hosts[0].LastSeen.Equal(now) {
		t.Errorf("an item without a time is seen now, to the second: %+v", hosts)
	}
}
