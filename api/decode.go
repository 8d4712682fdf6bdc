package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/obsjson"
)

// Body limits, per endpoint: what an endpoint takes, and no more, is read.
const (
	// defaultBodyLimit bounds the body of every endpoint but observations: a configuration with
	// its hundred notifications is a few tens of KB.
	defaultBodyLimit = 256 << 10
	// observationBytes is the room one observation gets on average (real ones are 100 to 300
	// bytes), so observationsBodyLimit fits the 50,000-item cap.
	observationBytes      = 512
	observationsBodyLimit = herald.MaxObservationsPerRequest * observationBytes
	// prometheusAlertBytes is the room one Prometheus alert gets on average (labels,
	// annotations with a summary and a description, a generator URL).
	prometheusAlertBytes      = 2048
	prometheusAlertsBodyLimit = maxAlertsPerRequest * prometheusAlertBytes
)

// bodyLimits are the routes that take more than defaultBodyLimit.
var bodyLimits = map[string]int64{
	"POST /groups/{groupId}/observations":             observationsBodyLimit,
	"POST /prometheus/groups/{groupId}/api/v2/alerts": prometheusAlertsBodyLimit,
}

// body is the request body, bounded by the endpoint's limit.
func (c *call) body() io.Reader {
	return http.MaxBytesReader(nil, c.r.Body, c.bodyLimit)
}

// decode reads the JSON body into dst, refusing unknown fields, wrong types, trailing data,
// arrays over their cap, nesting over herald.MaxNesting and bodies over the endpoint's limit,
// each with the error body naming what was wrong. The shape is checked, token by token, before
// anything is decoded: a small body of many empty items never grows into many structs.
func (c *call) decode(dst any) error {
	var buf bytes.Buffer
	if n := c.r.ContentLength; n > 0 && n <= c.bodyLimit {
		buf.Grow(int(n))
	}
	if _, err := buf.ReadFrom(c.body()); err != nil {
		return decodeError(err)
	}
	if err := checkShape(buf.Bytes(), 0); err != nil {
		return err
	}
	return decodeJSON(buf.Bytes(), dst)
}

// decodeItems streams a JSON array body item by item: each is decoded and given to check (with
// its index) before the next is read, and the array is refused at its max-th item + 1 with 400
// REQUEST_TOO_LARGE. A refusal stops reading there. null reads as no items. An item's own
// arrays are bounded by the body limit (the items are the endpoint's sizing unit).
func decodeItems[T any](c *call, max int, check func(item T, i int) error) ([]T, error) {
	items, _, err := decodeItemsFrom(c.body(), max, check)
	return items, err
}

// decodeBatch is decodeItems that also answers the accepted array itself, compacted: decoding
// it again gives the same items (the same decoder reads the same bytes), so a batch is kept
// as it came rather than encoded anew. The bytes are those the decoder read, tee'd as it
// reads them: a refused body stops being read, and kept, at the same point.
//
// fast, when set, reads a whole compact body as the streaming decoder would, giving each item
// to its each func as it is read (the same items, or the same refusal; or ok false: it leaves
// the body to that decoder, which then decides as ever): a body of known length up to
// fastBatchLimit is read whole and given to it first.
func decodeBatch[T any](c *call, max int, check func(item T, i int) error, fast fastReader[T]) ([]T, []byte, error) {
	body := c.body()
	if n := c.r.ContentLength; fast != nil && n > 0 && n <= min(fastBatchLimit, c.bodyLimit) {
		whole := make([]byte, n)
		got, err := io.ReadFull(body, whole)
		if err == nil {
			items, ok, err := fast(whole, func(item T, i int) error {
				if i == max { // as decodeItemsFrom refuses the array: at its max-th item + 1
					return tooManyItems(max)
				}
				return check(item, i)
			})
			switch {
			case ok && err != nil:
				return nil, nil, err
			case ok && len(items) == 0:
				return nil, nil, nil
			case ok:
				return items, whole, nil
			}
		}
		// The streaming decoder reads what was read, then meets what reading met.
		body = io.MultiReader(bytes.NewReader(whole[:got]), errorReader{err})
	}
	items, read, err := decodeItemsFrom(body, max, check)
	if err != nil || len(items) == 0 {
		return items, nil, err
	}
	if bytes.IndexAny(read, " \t\r\n") < 0 {
		return items, read, nil // compact already (as agents' encoders write it)
	}
	var batch bytes.Buffer
	batch.Grow(len(read))
	if err := json.Compact(&batch, read); err != nil {
		return nil, nil, err // the decoder read it whole as one valid value
	}
	return items, batch.Bytes(), nil
}

// fastBatchLimit bounds the bodies decodeBatch reads whole before decoding them: a storm's
// batch of 500 observations is some 60 KB. A larger body is decoded as it is read, and one
// refused early is not read further.
const fastBatchLimit = 1 << 20

// fastReader reads a whole body of items, giving each to each as it is read; ok false leaves
// the body to the streaming decoder (obsjson.Read is one).
type fastReader[T any] func(body []byte, each func(item T, i int) error) (items []T, ok bool, err error)

// errorReader reads nothing, with err (nil: io.EOF).
type errorReader struct{ err error }

func (r errorReader) Read([]byte) (int, error) {
	if r.err == nil {
		return 0, io.EOF
	}
	return 0, r.err
}

// decodeItemsFrom is decodeItems of body; read is what it read of body (the whole array when
// it is taken). Each item's bytes, as read, are checked by checkItem once decoded.
func decodeItemsFrom[T any](body io.Reader, max int, check func(item T, i int) error) (items []T, read []byte, err error) {
	var buf bytes.Buffer // grows as the decoder reads: a body refused early costs little
	dec := json.NewDecoder(io.TeeReader(body, &buf))
	dec.DisallowUnknownFields()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, itemsError(err, "the start of the body")
	}
	if tok == nil {
		return nil, nil, endOfBody(dec)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, nil, herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body must be a JSON array.")
	}
	for i := 0; dec.More(); i++ {
		if i == max {
			return nil, nil, tooManyItems(max)
		}
		start := dec.InputOffset() // at the comma before the item, or the item itself
		var item T
		if err := dec.Decode(&item); err != nil {
			return nil, nil, itemsError(err, fmt.Sprintf("item %d", i))
		}
		raw := bytes.TrimLeft(buf.Bytes()[start:dec.InputOffset()], ", \t\r\n")
		if err := checkItem(raw); err != nil {
			return nil, nil, itemAnswer(err, i)
		}
		if err := check(item, i); err != nil {
			return nil, nil, err
		}
		items = append(items, item)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		where := "the end of the array"
		if len(items) > 0 {
			where += fmt.Sprintf(", after item %d", len(items)-1)
		}
		return nil, nil, itemsError(err, where)
	}
	if err := endOfBody(dec); err != nil {
		return nil, nil, err
	}
	return items, buf.Bytes(), nil
}

// tooManyItems refuses an array of more than max items.
func tooManyItems(max int) error {
	return herald.Errorf(herald.KindInvalid, herald.CodeRequestTooLarge, []any{max}, "A request holds at most %d items.", max)
}

// itemsError is the answer to err, met reading an array body at where ("item 3"): a stream's
// syntax errors carry no reliable offset, so the item says where; an attribute's error is
// the item's.
func itemsError(err error, where string) error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return invalidJSON(syntax.Error(), where)
	}
	answer := decodeError(err)
	var e *herald.Error
	if errors.As(answer, &e) && e.Code != herald.CodeInvalidJSON && e.Code != herald.CodeRequestTooLarge {
		e.Detail = strings.ToUpper(where[:1]) + where[1:] + ": " + e.Detail
	}
	return answer
}

// itemAnswer is checkItem's refusal e of item i, saying which item when it does not (a
// duplicate name is answered as in any other body).
func itemAnswer(e *herald.Error, i int) error {
	if e.Code != herald.CodeInvalidJSON {
		e.Detail = fmt.Sprintf("Item %d: %s", i, e.Detail)
	}
	return e
}

// endOfBody refuses data after the body's one JSON value.
func endOfBody(dec *json.Decoder) error {
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return decodeError(err)
		}
		return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body must hold one JSON value.")
	}
	return nil
}

// shapeFrame is an open object or array of walkShape's walk.
type shapeFrame struct {
	array   bool
	wantKey bool   // an object whose next token is a key
	exact   bool   // a label set (a map): its names are compared as they are, not folded
	key     string // an object's current key
	object  int    // an object's number in the walk, for its keys in seen
	items   int    // an array's items so far
	limit   int    // an array's cap
	name    string // the attribute the array is, for the error
}

// shapeKey is an attribute name of one object (numbered by walkShape's walk) as
// encoding/json matches names to fields: case-insensitively (foldName), or as it is in a
// label set.
type shapeKey struct {
	object int
	name   string
}

// labelSets are the attributes whose objects are herald.Labels, maps whose names
// encoding/json takes as they are: "job" and "Job" are two labels.
var labelSets = map[string]bool{"labels": true, "annotations": true}

// checkShape walks the tokens of one JSON value (depth levels below the body's top) and
// refuses nesting deeper than herald.MaxNesting, arrays over their cap (a top-level
// "notifications" holds herald.MaxNotificationsPerConfig, any other array
// herald.MaxArrayItems), and what checkItem refuses. It stops at the first refusal; syntax
// errors are left to the decoder, which names them.
func checkShape(b []byte, depth int) error {
	if e := walkShape(b, depth, true); e != nil {
		return e
	}
	return nil
}

// checkItem refuses, in one item of an array body, an object naming an attribute twice
// (encoding/json would take the last value silently, where whatever else reads the body, a
// proxy or an audit, may take the first) and a string that is not UTF-8 (encoding/json would
// read each bad byte as U+FFFD, so the checks after it could not see it). The body's limit
// bounds the rest of an item (decodeItems).
func checkItem(b []byte) *herald.Error {
	if obsjson.DistinctNames(b) { // the usual item: compact, its names distinct
		return nil
	}
	return walkShape(b, 1, false)
}

// walkShape is checkShape with caps, checkItem without.
func walkShape(b []byte, depth int, caps bool) *herald.Error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers stay text: a 1e999 is the decoder's to refuse
	var stack []shapeFrame
	var seen map[shapeKey]bool // the names of the objects walked (made at the first)
	objects := 0
	utf8Checked := utf8.Valid(b) // otherwise each string is checked, to name the attribute
	var end int64                // where the last token ended
	valueDone := func() {
		if n := len(stack); n > 0 && !stack[n-1].array {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if !utf8Checked {
			start := end
			end = dec.InputOffset()
			if _, isString := tok.(string); isString && !utf8.Valid(b[start:end]) {
				return notUTF8(stack)
			}
		}
		d, isDelim := tok.(json.Delim)
		if isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		var parent *shapeFrame
		if n := len(stack); n > 0 {
			parent = &stack[n-1]
		}
		if parent != nil && parent.wantKey {
			parent.key, _ = tok.(string)
			parent.wantKey = false
			k := shapeKey{parent.object, parent.key}
			if !parent.exact {
				k.name = foldName(parent.key)
			}
			if seen[k] {
				return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, []any{parent.key},
					"The request body names attribute %s twice in one object.", parent.key)
			}
			if seen == nil {
				seen = map[shapeKey]bool{}
			}
			seen[k] = true
			continue
		}
		if parent != nil && parent.array && caps {
			if parent.items++; parent.items > parent.limit {
				return herald.Invalid(herald.CodeInvalidAttribute, parent.name, "Attribute %s holds at most %d items.", parent.name, parent.limit)
			}
		}
		if !isDelim {
			valueDone()
			continue
		}
		if caps && depth+len(stack) >= herald.MaxNesting {
			return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body nests deeper than %d levels.", herald.MaxNesting)
		}
		f := shapeFrame{array: d == '[', wantKey: d == '{', limit: herald.MaxArrayItems}
		if !f.array {
			objects++
			f.object = objects
			f.exact = parent != nil && !parent.array && labelSets[parent.key]
		}
		if parent != nil {
			f.name = parent.name
			if !parent.array {
				f.name = parent.key
			}
		}
		if f.array && f.name == "notifications" && depth+len(stack) == 1 {
			f.limit = herald.MaxNotificationsPerConfig
		}
		stack = append(stack, f)
	}
}

// notUTF8 refuses a string that is not UTF-8, met at stack: 400 INVALID_ATTRIBUTE naming the
// attribute that holds it (for a name, the object it names an attribute of), or INVALID_JSON
// when it is in none.
func notUTF8(stack []shapeFrame) *herald.Error {
	var path []string
	for i, f := range stack {
		if f.array || i == len(stack)-1 && f.wantKey { // an item, or a name of this object
			continue
		}
		path = append(path, f.key)
	}
	if len(path) == 0 {
		return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body holds a string that is not UTF-8.")
	}
	attr := strings.Join(path, ".")
	return herald.InvalidAttribute(attr, "Attribute %s holds a string that is not UTF-8.", attr)
}

// foldName is name as encoding/json compares attribute names: two names fold alike when
// bytes.EqualFold holds ("Enabled", "enabled" and "enabſed" name one field). Each rune
// becomes one of its simple case-folding orbit: an ASCII letter's lower case (the Kelvin sign
// and the long s are in the orbits of k and s), any other the smallest. A name of lower-case
// ASCII, the usual one, is its own.
func foldName(name string) string {
	i := 0
	for i < len(name) && name[i] < utf8.RuneSelf && !('A' <= name[i] && name[i] <= 'Z') {
		i++
	}
	if i == len(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name))
	b.WriteString(name[:i])
	for _, r := range name[i:] {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		if 'A' <= low && low <= 'Z' {
			low += 'a' - 'A'
		}
		b.WriteRune(low)
	}
	return b.String()
}
