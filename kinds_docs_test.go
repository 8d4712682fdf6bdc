package herald

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Every kind is documented where the API's users read of it: a row of docs/api.md's table of
// notification fields naming each of its fields, its integration's fields in the paragraph of
// fields per type, and each field and typeName in openapi.json. A kind's package declares its
// fields; this test says where a new kind must document them.
func TestAPIDocsListEveryKindsFields(t *testing.T) {
	md, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("api/openapi.json")
	var doc struct {
		Components struct {
			Schemas map[string]struct{ Properties map[string]json.RawMessage }
		}
	}
	if err != nil || json.Unmarshal(raw, &doc) != nil {
		t.Fatalf("api/openapi.json: %v", err)
	}
	notification, integration := doc.Components.Schemas["Notification"].Properties, doc.Components.Schemas["Integration"].Properties
	var typeName struct{ Description string }
	_ = json.Unmarshal(notification["typeName"], &typeName)
	_, perType, _ := strings.Cut(string(md), "Fields per type:")
	perType, _, _ = strings.Cut(perType, "A notification of a kind")
	for _, k := range Kinds() {
		row := ""
		for line := range strings.SplitSeq(string(md), "\n") {
			if cells := strings.Split(line, " | "); strings.HasPrefix(line, "| `") && strings.Contains(cells[0], "`"+k.Name+"`") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("docs/api.md's table of notification fields has no row for %s", k.Name)
		}
		for _, f := range k.Fields {
			if !strings.Contains(row, "`"+f.Name+"`") {
				t.Errorf("docs/api.md's row of %s does not name %s", k.Name, f.Name)
			}
			if _, ok := notification[f.Name]; !ok {
				t.Errorf("openapi.json's Notification has no %s (%s)", f.Name, k.Name)
			}
		}
		for _, name := range []string{k.Name, k.GlobalName} {
			if name != "" && !strings.Contains(typeName.Description, name) {
				t.Errorf("openapi.json's typeName does not name %s", name)
			}
		}
		if it := k.Integration; it != nil {
			_, fields, _ := strings.Cut(perType, "`"+it.Name+"`")
			fields, _, _ = strings.Cut(fields, ";")
			for _, f := range it.Fields {
				if !strings.Contains(fields, "`"+f.Name+"`") {
					t.Errorf("docs/api.md's fields of %s integrations do not name %s", it.Name, f.Name)
				}
				if _, ok := integration[f.Name]; !ok {
					t.Errorf("openapi.json's Integration has no %s (%s)", f.Name, it.Name)
				}
			}
		}
	}
}
