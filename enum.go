package herald

import (
	"fmt"
	"strings"
)

// enumListed is how many valid values an answer lists in full whatever was given; a longer
// enumeration (event types, metrics) is listed only when the value given is like none of it.
const enumListed = 20

// NotOneOf is the 400 INVALID_ENUM_VALUE for value of param, which is not one of valid: the
// detail says what is wrong (format, args), then the valid value the given one is likely a
// typo of, and the valid values (docs/api.md#errors).
func NotOneOf(param, value string, valid []string, format string, args ...any) *Error {
	return Invalid(CodeInvalidEnumValue, param, "%s", fmt.Sprintf(format, args...)+enumHint(value, valid))
}

// enumHint is what an answer adds about value, not one of valid: " Did you mean X?" when a
// valid value is near it, and " Valid values: A, B." when they are few or none is near.
func enumHint(value string, valid []string) string {
	var b strings.Builder
	near := Nearest(value, valid)
	if near != "" {
		fmt.Fprintf(&b, " Did you mean %s?", near)
	}
	if len(valid) > 0 && (len(valid) <= enumListed || near == "") {
		fmt.Fprintf(&b, " Valid values: %s.", strings.Join(valid, ", "))
	}
	return b.String()
}

// Nearest is the value of valid that value is most likely a typo of, ignoring case: the first
// at the least edit distance, if that is at most a third of value's length (at least 1);
// otherwise "".
func Nearest(value string, valid []string) string {
	best, bestD := "", max(1, len(value)/3)+1
	for _, v := range valid {
		if d := EditDistance(strings.ToUpper(value), strings.ToUpper(v)); d < bestD {
			best, bestD = v, d
		}
	}
	return best
}

// EditDistance is the optimal string alignment distance of a and b, in bytes (enumerations
// are ASCII): insertions, deletions, substitutions, and swaps of adjacent letters ("HOTS").
func EditDistance(a, b string) int {
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(a); i++ {
		before, prev, cur := rows[0], rows[1], rows[2]
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		rows = [3][]int{prev, cur, before}
	}
	return rows[1][len(b)]
}
