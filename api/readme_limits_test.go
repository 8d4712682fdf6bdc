package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/store"
)

// The security page states the limits the code enforces.
func TestSecurityPageStatesTheLimits(t *testing.T) {
	b, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := regexp.MustCompile(`\s+`).ReplaceAllString(string(b), " ")
	thousands := func(v int) string {
		s := fmt.Sprint(v)
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		return s
	}
	l := api.DefaultAuthLimits
	for _, want := range []string{
		fmt.Sprintf("within %d minutes: %d failures of one key or user from one client address", int(l.Window.Minutes()), l.PerPair),
		fmt.Sprintf("%d failures from one address", l.PerAddress),
		fmt.Sprintf("%d failures of one key or user from anywhere", l.PerName),
		fmt.Sprintf("observations %s bytes (%s items × 512 B)", thousands(api.ObservationsBodyLimit), thousands(herald.MaxObservationsPerRequest)),
		fmt.Sprintf("every other endpoint %d KiB", api.DefaultBodyLimit>>10),
		fmt.Sprintf("more than %d `notifications`, any other array over %s items, nesting deeper than %d",
			herald.MaxNotificationsPerConfig, thousands(herald.MaxArrayItems), herald.MaxNesting),
		fmt.Sprintf("waiting observations over %d MiB", store.DefaultObservationBacklog>>20),
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("docs/security.md does not say %q", want)
		}
	}
}

// The OpenAPI document bounds delayMin and intervalMin as the code does.
func TestOpenAPIStatesNotificationBounds(t *testing.T) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Minimum *int `json:"minimum"`
					Maximum *int `json:"maximum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["Notification"].Properties
	for name, want := range map[string][2]int{"delayMin": {0, herald.MaxDelayMin}, "intervalMin": {herald.MinIntervalMin, herald.MaxIntervalMin}} {
		p := props[name]
		if p.Minimum == nil || p.Maximum == nil || *p.Minimum != want[0] || *p.Maximum != want[1] {
			t.Errorf("openapi.json: %s from %v to %v, want %d to %d", name, p.Minimum, p.Maximum, want[0], want[1])
		}
	}
}
