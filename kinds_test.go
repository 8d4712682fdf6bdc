package herald

import (
	"reflect"
	"testing"
)

// The registry of kinds holds together: every field it names is a field of a notification and
// of the kind's integration, every secret's target is a field of its kind, every spelling is
// one kind's, kinds sharing a queue share its priority, and no kind reaches nobody by
// construction.
func TestKindRegistryIsConsistent(t *testing.T) {
	spelling := map[string]string{}
	priority := map[string]int{}
	declared := map[string]string{}
	for _, k := range Kinds() {
		for _, name := range []string{k.Name, k.GlobalName} {
			if name == "" {
				continue
			}
			if other, dup := spelling[name]; dup {
				t.Errorf("%s spells both %s and %s", name, other, k.Name)
			}
			spelling[name] = k.Name
		}
		if !k.Project && !k.Global {
			t.Errorf("%s is accepted nowhere", k.Name)
		}
		if k.Queue == "" || k.Priority <= 0 {
			t.Errorf("%s: queue %q, priority %d", k.Name, k.Queue, k.Priority)
		}
		if p, seen := priority[k.Queue]; seen && p != k.Priority {
			t.Errorf("queue %s has priority %d for one kind and %d for %s", k.Queue, p, k.Priority, k.Name)
		}
		priority[k.Queue] = k.Priority
		if it := k.Integration; it != nil {
			if other, ok := LookupIntegrationType(it.Name); !ok || other != it {
				t.Errorf("%s: its integration type %s is not the one of that name", k.Name, it.Name)
			}
		}

		target := false
		credentials := 0
		for _, f := range k.Fields {
			if other, dup := declared[f.Name]; dup {
				t.Errorf("%s and %s both declare %s", other, k.Name, f.Name)
			}
			declared[f.Name] = k.Name
			target = target || f.Required
			if f.Credential {
				credentials++
			}
			if f.Target != "" {
				if tf, ok := k.field(f.Target); !ok || f.Mask == nil || tf.Integration == "" && f.Integration != "" {
					t.Errorf("%s: %s is bound to %s, which is not a field of the kind (or the secret is not masked)", k.Name, f.Name, f.Target)
				}
			}
			if f.Integration != "" {
				if k.Integration == nil {
					t.Errorf("%s: %s comes from %s, but the kind has no integration", k.Name, f.Name, f.Integration)
				} else if _, ok := k.Integration.field(f.Integration); !ok {
					t.Errorf("%s: %s comes from %s, which %s integrations do not have", k.Name, f.Name, f.Integration, k.Integration.Name)
				}
			}
		}
		if credentials > 1 {
			t.Errorf("%s has %d credentials; a refused one is removed by the kind's one", k.Name, credentials)
		}
		switch p := k.People; {
		case p != nil && (p.Reaches == nil || !p.Email && !p.SMS):
			t.Errorf("%s reaches people by no means", k.Name)
		case p == nil && !target:
			t.Errorf("%s has no target of its own and reaches no people: it reaches nobody", k.Name)
		}
	}
	for _, name := range []string{"typeName", "delayMin", "intervalMin", "emailEnabled", "smsEnabled", "roles", "role"} {
		if declared[name] != "" {
			t.Errorf("%s declares %s, an attribute of every notification", declared[name], name)
		}
	}
}

// The spellings: CHATA in global configurations only, CHAT_A in project ones, ADMIN global only.
func TestKindSpellings(t *testing.T) {
	for _, tc := range []struct {
		typeName         string
		project, global  bool
		kind, globalName string
	}{
		{"CHAT_A", true, false, "CHAT_A", "CHATA"},
		{"CHATA", false, true, "CHAT_A", "CHATA"},
		{"ADMIN", false, true, "ADMIN", "ADMIN"},
		{"ORG", true, false, "ORG", "ORG"},
		{"WEBHOOK", true, true, "WEBHOOK", "WEBHOOK"},
	} {
		k, ok := LookupKind(tc.typeName)
		if !ok || k.Name != tc.kind || k.TypeName(true) != tc.globalName ||
			k.Accepts(tc.typeName, false) != tc.project || k.Accepts(tc.typeName, true) != tc.global {
			t.Errorf("%s: kind %+v", tc.typeName, k)
		}
	}
	if _, ok := LookupKind(""); ok {
		t.Error("the empty typeName is a kind")
	}
}

func TestParseAdminEmails(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"", nil, false},
		{"  ", nil, false},
		{"ops@example.com", []string{"ops@example.com"}, false},
		{" ops@example.com , oncall@example.com,ops@example.com", []string{"ops@example.com", "oncall@example.com"}, false},
		{"ops@example.com,", nil, true},
		{"Ops <ops@example.com>", nil, true},
		{"not an address", nil, true},
	} {
		got, err := ParseAdminEmails(tc.in)
		if (err != nil) != tc.bad || !tc.bad && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseAdminEmails(%q) = %v, %v", tc.in, got, err)
		}
	}
	a, b := Administrators([]string{"ops@example.com"}), Administrators([]string{"oncall@example.com", "OPS@example.com"})
	if a[0].ID != b[1].ID || a[0].ID == b[0].ID || a[0].EmailAddress != "ops@example.com" {
		t.Errorf("administrators' ids: %+v, %+v", a, b)
	}
}

func TestSameHost(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"", "", true},
		{"https://hooks.example.com/a", "https://HOOKS.example.com/b?x=1", true},
		{"https://hooks.example.com/a", "http://hooks.example.com/a", false},
		{"https://hooks.example.com/a", "https://hooks.example.com:8443/a", false},
		{"https://hooks.example.com/a", "https://evil.example.com/a", false},
		{"https://hooks.example.com/a", "", false},
		{"not a url", "also not", false},
	} {
		if got := SameHost(tc.a, tc.b); got != tc.same {
			t.Errorf("SameHost(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

// A kind is registered once: registering a kind, a spelling, a field or an integration type
// that another kind has refuses to start.
func TestRegisterKindsRefusesDuplicates(t *testing.T) {
	webhook, _ := LookupKind("WEBHOOK")
	for name, k := range map[string]Kind{
		"a kind again":          webhook,
		"another's spelling":    {Name: "CHAT_Z", GlobalName: "CHATA"},
		"another's field":       {Name: "CHAT_Z", Fields: []KindField{{Name: "webhookUrl"}}},
		"another's integration": {Name: "CHAT_Z", Integration: &IntegrationType{Name: "SCRAPER_A"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			RegisterKinds(k)
		}()
	}
	if _, ok := LookupKind("CHAT_Z"); ok {
		t.Error("a refused kind is registered")
	}
}
