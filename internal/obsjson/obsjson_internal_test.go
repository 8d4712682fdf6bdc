package obsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
)

// obsSeeds are batches as agents and the Prometheus front door send them, and forms the
// compact reader must leave to encoding/json.
var obsSeeds = []string{
	`[]`,
	`[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h-1","hostnameAndPort":"h-1.example.com:27017"},{"eventTypeName":"HOST_DOWN","active":false,"hostId":"h-2","hostnameAndPort":"h-2.example.com:27017"}]`,
	`[{"metricName":"ASSERT_REGULAR","value":12.5e-1,"units":"RAW","hostId":"h","typeName":"REPLICA_PRIMARY","replicaSetName":"rs0","clusterId":"c","clusterName":"cn","shardName":"s0","sourceTypeName":"REPLICA_SET","at":"2027-01-15T08:00:00Z","disks":[{"partitionName":"data"}],"currentValue":{"number":3,"units":"RAW"}}]`,
	`[{"eventTypeName":"PROMETHEUS_ALERT","active":true,"labels":{"alertname":"X","job":"node\"s"},"annotations":{"summary":"a\nb"},"generatorURL":"http://p/graph?g0.expr=up","endsAt":"2027-01-15T08:05:00.123Z"}]`,
	`[{"eventTypeName":"HOST_DOWN","hostId":"é","value":-0},{}]`,
	`[{"eventTypeName":"PROMETHEUS_ALERT","active":true,"labels":{"job":"a","Job":"b","JOB":"c"}}]`,
	`[{"labels":{"a":"1"},"labels":{"b":"2"},"hostId":"x","hostId":"y"}]`, `[{"hostId":"x","hostId":"x"}]`,
	`[{"labels":{"a":"1","a":"2"}}]`, `[{"annotations":{"a":"1","b":"2","a":"1"}}]`, `[{"labels":{"a":"1","\u0061":"2"}}]`,
	`[{"currentValue":{"number":1,"Number":2,"units":"RAW"}}]`, `[{"disks":[{"partitionName":"p","partitionname":"q"}]}]`,
	`[{"labels":{"a\xff":"1"}}]`, `[{"labels":{"a":"\xff"}}]`, `[{"disks":[{"partitionName":"\xc0\xaf"}]}]`,
	` [{"hostId":"h"}]`, `[{"hostId":"h"}] `, `[{"HostId":"h"}]`, `[{"hostid":"h"}]`, `[{"unknown":1}]`,
	`[{"hostId":"a\"b"}]`, `[{"hostId":"\xff"}]`, `[{"active":null}]`, `[{"at":null}]`, `[null]`, `null`,
	`[{"value":1e400}]`, `[{"value":01}]`, `[{"value":1.}]`, `[{"value":"1"}]`, `[{"active":"true"}]`,
	`[{"at":"not a time"}]`, `[{"labels":{"a":1}}]`, `[{"disks":[{"partitionName":"p"},]}]`, `[{"hostId":"h"},]`, `[`, ``,
	`[{"currentValue":{"number":3,"units":"RAW","extra":1}}]`, `[{"disks":[{"partitionName":"p","extra":2}]}]`,
}

// strictItems reads b as the API reads a posted batch before this package: a json.Decoder
// refusing unknown fields, item by item, and nothing after the array.
func strictItems(b []byte) ([]herald.Observation, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("not an array: %v %v", tok, err)
	}
	obs := []herald.Observation{}
	for dec.More() {
		var o herald.Observation
		if err := dec.Decode(&o); err != nil {
			return nil, err
		}
		obs = append(obs, o)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("after the array: %v", err)
	}
	return obs, nil
}

// Whatever the bytes, Decode decodes them as json.Unmarshal does (the same
// observations, or an error where it errs), and the compact reader takes the common forms.
func FuzzDecodeObservations(f *testing.F) {
	for _, s := range obsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []herald.Observation
		wantErr := json.Unmarshal(b, &want)
		got, err := Decode(b)
		if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%q: got %s (%v), want %s (%v)", b, dump(got), err, dump(want), wantErr)
		}
		compact, ok := Compact(b)
		if ok && (wantErr != nil || !reflect.DeepEqual(compact, want)) {
			t.Errorf("%q: the compact reader took %s, json.Unmarshal gives %s (%v)", b, dump(compact), dump(want), wantErr)
		}
		if strict, err := strictItems(b); ok && (err != nil || !reflect.DeepEqual(compact, strict)) {
			t.Errorf("%q: the compact reader took %s, the API's strict reading gives %s (%v)", b, dump(compact), dump(strict), err)
		}
	})
}

func dump(obs []herald.Observation) string {
	b, _ := json.Marshal(obs)
	return fmt.Sprintf("%s (nil %v)", b, obs == nil)
}

// The forms agents send are read by hand, not left to encoding/json; so are label names that
// differ only in case (two labels). An object naming a member twice, and bytes that are not
// UTF-8, are left to encoding/json, as are forms the reader does not read.
func TestCompactObservationsTakesAgentsBatches(t *testing.T) {
	for _, s := range obsSeeds[:6] {
		if _, ok := Compact([]byte(s)); !ok {
			t.Errorf("left to encoding/json: %s", s)
		}
	}
	for _, s := range obsSeeds[6:] {
		if _, ok := Compact([]byte(s)); ok {
			t.Errorf("read by hand: %s", s)
		}
	}
}

// BenchmarkDecodeObservations: a storm's batch of 500 HOST_DOWN observations.
func BenchmarkDecodeObservations(b *testing.B) {
	var items []string
	for i := range 500 {
		items = append(items, fmt.Sprintf(`{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h-%d","hostnameAndPort":"h-%d.example.com:27017"}`, i, i))
	}
	batch := []byte("[" + strings.Join(items, ",") + "]")
	b.Run("compact", func(b *testing.B) {
		for range b.N {
			if _, err := Decode(batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for range b.N {
			var obs []herald.Observation
			if err := json.Unmarshal(batch, &obs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Read gives each observation to each as it is read, in order, and stops at each's first
// error, reading no further.
func TestReadStopsAtTheFirstRefusal(t *testing.T) {
	b := []byte(obsSeeds[1][:len(obsSeeds[1])-1] + `,{"hostId":"h-3"},{"hostId":"h-4"}]`)
	var seen []string
	refuse := errors.New("refused")
	obs, ok, err := Read(b, func(o herald.Observation, i int) error {
		seen = append(seen, fmt.Sprintf("%d:%s", i, o.HostID))
		if o.HostID == "h-3" {
			return refuse
		}
		return nil
	})
	if !ok || err != refuse || obs != nil {
		t.Errorf("got %v, %v, %v; want nothing, true and the refusal", obs, ok, err)
	}
	if want := []string{"0:h-1", "1:h-2", "2:h-3"}; !reflect.DeepEqual(seen, want) {
		t.Errorf("each was given %v, want %v", seen, want)
	}
	if obs, ok, err := Read(b, func(herald.Observation, int) error { return nil }); !ok || err != nil || len(obs) != 4 {
		t.Errorf("accepting all: %d observations, %v, %v", len(obs), ok, err)
	}
}
