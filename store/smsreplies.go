package store

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// SMSNotice is the last notice texted to a number: the alert a reply from that number acts on.
type SMSNotice struct {
	GroupID string    `json:"g,omitempty"` // the alert's project; "" for a global alert of none
	AlertID string    `json:"a"`
	Global  bool      `json:"gl,omitempty"`
	Sent    time.Time `json:"t"`
}

// smsLast is the key of the last notice texted to number, on a slot of its own. A leading +
// is left out: the gateway names the sender of a reply with it, a notification may not.
func smsLast(number string) string {
	number = strings.TrimPrefix(number, "+")
	return key("{sms:"+number+"}", "last")
}

// rememberSMS keeps a notice unless the number's kept notice was sent later: deliveries to one
// number may finish out of order, and a reply acts on the one sent last.
// KEYS[1] the number's notice; ARGV[1] its JSON; ARGV[2] its time (unix ms); ARGV[3] ttl (ms).
var rememberSMS = redis.NewScript(`
local kept = redis.call('HGET', KEYS[1], 't')
if kept and tonumber(kept) > tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'n', ARGV[1], 't', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// RememberSMS keeps n as the last notice texted to number (as the gateway takes it: + and
// digits, with or without +), for ttl, unless a later one is kept already.
func (s *Store) RememberSMS(ctx context.Context, number string, n SMSNotice, ttl time.Duration) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return rememberSMS.Run(ctx, s.rdb, []string{smsLast(number)}, b, strconv.FormatInt(n.Sent.UnixMilli(), 10), ttl.Milliseconds()).Err()
}

// LastSMS is the last notice texted to number; ok is false when none is kept.
func (s *Store) LastSMS(ctx context.Context, number string) (n SMSNotice, ok bool, err error) {
	v, err := s.rdb.HGet(ctx, smsLast(number), "n").Result()
	if errors.Is(err, redis.Nil) {
		return n, false, nil
	}
	if err != nil {
		return n, false, err
	}
	if err := json.Unmarshal([]byte(v), &n); err != nil {
		return n, false, err
	}
	return n, true, nil
}
