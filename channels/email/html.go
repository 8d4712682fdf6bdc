package email

import (
	"cmp"
	"html/template"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// page is the HTML part of a notice: the same words as the plain part, the action links as
// buttons, the alert's details. Inline styles only (mail clients drop style sheets), no image,
// no script, nothing fetched from elsewhere. html/template escapes every alert field, and
// refuses a link that is not http(s).
var page = template.Must(template.New("notice").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:16px;background:#f4f4f5;font-family:Helvetica,Arial,sans-serif;color:#18181b">
<div style="max-width:600px;margin:0 auto;background:#ffffff;border-radius:6px;border-top:6px solid {{.Color}};padding:20px">
<p style="margin:0 0 4px 0;font-size:13px;color:#52525b">{{.N.Headline}}{{if .N.Where}} &middot; {{.N.Where}}{{end}}</p>
<h1 style="margin:0 0 12px 0;font-size:20px;line-height:1.3">{{.N.What}}</h1>
{{- if .N.When}}
<p style="margin:0 0 4px 0;font-size:15px">{{.N.When}}</p>
{{- end}}
{{- if .N.Ack}}
<p style="margin:0 0 4px 0;font-size:15px">Acknowledged {{.N.Ack}}</p>
{{- end}}
{{- if .N.Links}}
<p style="margin:16px 0 8px 0">
{{- range .N.Links}}
<a href="{{.URL}}" style="display:inline-block;margin:0 8px 8px 0;padding:10px 16px;border-radius:4px;background:#1d4ed8;color:#ffffff;text-decoration:none;font-weight:bold;font-size:14px">{{.Label}}</a>
{{- end}}
</p>
{{- end}}
<pre style="margin:16px 0 0 0;padding:12px;background:#f4f4f5;border-radius:4px;font-family:Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap;word-break:break-all">{{.Summary}}</pre>
</div>
</body></html>
`))

// colors are the top border of a notice, by status: red while open, amber acknowledged, green
// resolved, gray cancelled.
var colors = map[string]string{"Open": "#dc2626", "Acknowledged": "#d97706", "Resolved": "#16a34a", "Cancelled": "#71717a"}

// htmlBody is the HTML part of notice n about alert a.
func htmlBody(n channels.Notice, a herald.Alert) (string, error) {
	var b strings.Builder
	err := page.Execute(&b, struct {
		N                       channels.Notice
		Subject, Color, Summary string
	}{n, subject(n), cmp.Or(colors[n.Status], "#dc2626"), n.Details(a)})
	return b.String(), err
}
