package store

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"time"

	"github.com/heraldhq/herald"
)

// An active alert's schedule is a field of its scope's schedules hash, in a binary form of its
// own: 100,000 open alerts keep 100,000 of them, and at about 27 bytes one fits Redis's
// 32-byte size class where its JSON took 80. The form:
//
//	0x01                          the form's version (JSON, the form before, starts with '{')
//	varint  detected              unix milliseconds
//	uvarint len(Next), then each: 0 for none, else zigzag(next - detected in ms) + 1
//	uvarint len(Sent), then each: uvarint sent
//	target: 0x01 and its 12 bytes when it is a TargetID (16 base64url characters), else 0x00 and the string
const scheduleForm = 0x01

// errBadSchedule says a stored schedule cannot be read.
var errBadSchedule = errors.New("store: malformed schedule")

func encodeSchedule(s herald.Schedule, target string) ([]byte, error) {
	detected := s.Detected.UnixMilli()
	b := make([]byte, 0, 32)
	b = append(b, scheduleForm)
	b = binary.AppendVarint(b, detected)
	b = binary.AppendUvarint(b, uint64(len(s.Next)))
	for _, t := range s.Next {
		if t.IsZero() {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, zigzag(t.UnixMilli()-detected)+1)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Sent)))
	for _, n := range s.Sent {
		if n < 0 {
			return nil, errors.New("store: a schedule with a negative count of notices sent")
		}
		b = binary.AppendUvarint(b, uint64(n))
	}
	if raw, err := base64.RawURLEncoding.DecodeString(target); err == nil && len(raw) == 12 && len(target) == 16 {
		return append(append(b, 1), raw...), nil
	}
	return append(append(b, 0), target...), nil
}

// decodeSchedule reads a stored schedule and its target, in either form.
func decodeSchedule(b []byte) (herald.Schedule, string, error) {
	if len(b) > 0 && b[0] == '{' {
		return decodeScheduleJSON(b)
	}
	if len(b) == 0 || b[0] != scheduleForm {
		return herald.Schedule{}, "", errBadSchedule
	}
	r := scheduleReader{b: b[1:]}
	detected := r.varint()
	s := herald.Schedule{Detected: time.UnixMilli(detected)}
	s.Next = make([]time.Time, r.count())
	for i := range s.Next {
		if v := r.uvarint(); v != 0 {
			s.Next[i] = time.UnixMilli(detected + unzigzag(v-1))
		}
	}
	if n := r.count(); n > 0 {
		s.Sent = make([]int, n)
		for i := range s.Sent {
			s.Sent[i] = int(r.uvarint())
		}
	}
	if r.bad || len(r.b) == 0 {
		return herald.Schedule{}, "", errBadSchedule
	}
	kind, rest := r.b[0], r.b[1:]
	switch {
	case kind == 1 && len(rest) == 12:
		return s, base64.RawURLEncoding.EncodeToString(rest), nil
	case kind == 0:
		return s, string(rest), nil
	}
	return herald.Schedule{}, "", errBadSchedule
}

// scheduleReader reads varints off b, remembering whether any was malformed.
type scheduleReader struct {
	b   []byte
	bad bool
}

func (r *scheduleReader) varint() int64   { return readVarint(r, binary.Varint) }
func (r *scheduleReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

// readVarint reads one varint off r with read (binary.Varint or binary.Uvarint).
func readVarint[T int64 | uint64](r *scheduleReader, read func([]byte) (T, int)) T {
	v, n := read(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count is a length, bounded by what is left to read (each item takes at least a byte).
func (r *scheduleReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad = true
		return 0
	}
	return int(n)
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }
