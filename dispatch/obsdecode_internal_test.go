package dispatch

import (
	"encoding/json"
	"fmt"
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
	`[{"labels":{"a":"1"},"labels":{"b":"2"},"hostId":"x","hostId":"y"}]`,
	` [{"hostId":"h"}]`, `[{"hostId":"h"}] `, `[{"HostId":"h"}]`, `[{"hostid":"h"}]`, `[{"unknown":1}]`,
	`[{"hostId":"a\"b"}]`, `[{"hostId":"\xff"}]`, `[{"active":null}]`, `[{"at":null}]`, `[null]`, `null`,
	`[{"value":1e400}]`, `[{"value":01}]`, `[{"value":1.}]`, `[{"value":"1"}]`, `[{"active":"true"}]`,
	`[{"at":"not a time"}]`, `[{"labels":{"a":1}}]`, `[{"disks":[{"partitionName":"p"},]}]`, `[{"hostId":"h"},]`, `[`, ``,
}

// Whatever the bytes, decodeObservations decodes them as json.Unmarshal does (the same
// observations, or an error where it errs), and the compact reader takes the common forms.
func FuzzDecodeObservations(f *testing.F) {
	for _, s := range obsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want []herald.Observation
		wantErr := json.Unmarshal(b, &want)
		got, err := decodeObservations(b)
		if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("%q: got %s (%v), want %s (%v)", b, dump(got), err, dump(want), wantErr)
		}
		if compact, ok := compactObservations(b); ok && (wantErr != nil || !reflect.DeepEqual(compact, want)) {
			t.Errorf("%q: the compact reader took %s, json.Unmarshal gives %s (%v)", b, dump(compact), dump(want), wantErr)
		}
	})
}

func dump(obs []herald.Observation) string {
	b, _ := json.Marshal(obs)
	return fmt.Sprintf("%s (nil %v)", b, obs == nil)
}

// The forms agents send are read by hand, not left to encoding/json.
func TestCompactObservationsTakesAgentsBatches(t *testing.T) {
	for _, s := range obsSeeds[:6] {
		if _, ok := compactObservations([]byte(s)); !ok {
			t.Errorf("left to encoding/json: %s", s)
		}
	}
	for _, s := range obsSeeds[6:] {
		if _, ok := compactObservations([]byte(s)); ok {
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
			if _, err := decodeObservations(batch); err != nil {
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
