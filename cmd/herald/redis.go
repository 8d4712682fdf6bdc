package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald/store"
)

// redisSettings say where Herald keeps its state and queues: one server (RedisURL), a master
// that Redis Sentinel watches (RedisSentinels and RedisMaster), or a Redis Cluster
// (RedisCluster). Exactly one is set. The store, asynq and asynqmon all use the one client
// openStore makes.
type redisSettings struct {
	RedisURL       string
	RedisSentinels string // comma-separated host:port
	RedisMaster    string
	RedisCluster   string // comma-separated host:port of some of the cluster's nodes
	// The password of the Sentinel master (and its replicas) or of the Cluster nodes, read
	// from the environment only so that it shows neither in --help nor in the process list.
	redisPassword string
}

func (r *redisSettings) bind(s settings) {
	s.url(&r.RedisURL, "redis-url", "HERALD_REDIS_URL", "one Redis server: "+redisURLForm+" (a password is best set in the environment)")
	s.string(&r.RedisSentinels, "redis-sentinels", "HERALD_REDIS_SENTINELS", "", "Redis Sentinel addresses, host:port,host:port (with --redis-master; the password: HERALD_REDIS_PASSWORD, environment only)")
	s.string(&r.RedisMaster, "redis-master", "HERALD_REDIS_MASTER", "", "the master name the sentinels watch")
	s.string(&r.RedisCluster, "redis-cluster", "HERALD_REDIS_CLUSTER", "", "Redis Cluster node addresses, host:port,host:port (the password: HERALD_REDIS_PASSWORD, environment only)")
	s.environmentOnly(&r.redisPassword, "HERALD_REDIS_PASSWORD")
	s.check(func() error {
		if !r.configured() { // herald dev: the embedded store
			return nil
		}
		if err := checkSecret("HERALD_REDIS_PASSWORD", r.redisPassword); err != nil {
			return err
		}
		if err := checkTrimmed("HERALD_REDIS_MASTER", r.RedisMaster); err != nil {
			return err
		}
		_, err := r.connector()
		return err
	})
}

// redisURLForm is what HERALD_REDIS_URL looks like.
const redisURLForm = "redis://[:password@]host:port/db, rediss://... (TLS) or unix:///path"

// configured reports whether any Redis is named.
func (r redisSettings) configured() bool {
	return r.RedisURL != "" || r.RedisSentinels != "" || r.RedisMaster != "" || r.RedisCluster != ""
}

// connector checks the settings and returns how to connect to the Redis they name.
func (r redisSettings) connector() (redisConnector, error) {
	named := 0
	for _, set := range []bool{r.RedisURL != "", r.RedisSentinels != "" || r.RedisMaster != "", r.RedisCluster != ""} {
		if set {
			named++
		}
	}
	switch {
	case named == 0:
		return redisConnector{}, errors.New("no Redis named: set HERALD_REDIS_URL, or HERALD_REDIS_SENTINELS with HERALD_REDIS_MASTER, or HERALD_REDIS_CLUSTER")
	case named > 1:
		return redisConnector{}, errors.New("name one Redis: HERALD_REDIS_URL, or HERALD_REDIS_SENTINELS with HERALD_REDIS_MASTER, or HERALD_REDIS_CLUSTER")
	case r.RedisURL != "":
		if r.redisPassword != "" {
			return redisConnector{}, errors.New("HERALD_REDIS_PASSWORD is for Sentinel and Cluster: put the password in HERALD_REDIS_URL")
		}
		o, err := parseRedisURL(r.RedisURL)
		if err != nil {
			return redisConnector{}, err
		}
		o.Protocol = store.Protocol // whatever the URL's protocol= says
		return redisConnector{single: o, name: "Redis at " + o.Addr}, nil
	case r.RedisCluster != "":
		addrs, err := hostPorts("HERALD_REDIS_CLUSTER", r.RedisCluster)
		if err != nil {
			return redisConnector{}, err
		}
		return redisConnector{cluster: &redis.ClusterOptions{Addrs: addrs, Password: r.redisPassword, Protocol: store.Protocol},
			name: "Redis Cluster " + strings.Join(addrs, ",")}, nil
	}
	if r.RedisSentinels == "" || r.RedisMaster == "" {
		return redisConnector{}, errors.New("a Redis Sentinel setup needs both HERALD_REDIS_SENTINELS and HERALD_REDIS_MASTER")
	}
	addrs, err := hostPorts("HERALD_REDIS_SENTINELS", r.RedisSentinels)
	if err != nil {
		return redisConnector{}, err
	}
	return redisConnector{failover: &redis.FailoverOptions{MasterName: r.RedisMaster, SentinelAddrs: addrs, Password: r.redisPassword, Protocol: store.Protocol},
		name: fmt.Sprintf("Redis Sentinel master %q (sentinels %s)", r.RedisMaster, strings.Join(addrs, ","))}, nil
}

// parseRedisURL reads HERALD_REDIS_URL. Its errors never carry the URL's password: go-redis's
// can (url.Parse's repeat the whole URL), and they end up in a pod's log.
func parseRedisURL(raw string) (*redis.Options, error) {
	read := raw
	if _, ok := userInfoRead(raw); !ok && strings.Contains(raw, "@") {
		// What go-redis says of raw could quote its password, and what it reads would have
		// none: it is read with its user information masked, for the reason it is refused.
		read = redactURL(raw)
	}
	o, err := redis.ParseURL(read)
	switch {
	case err == nil && read != raw:
		err = errors.New("its user name or password holds a character a URL must have percent-encoded: / ? # or %")
	case err == nil:
		if err := checkSecret("the password of HERALD_REDIS_URL", o.Password); err != nil {
			return nil, err
		}
		return o, nil
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // without the URL it repeats
	}
	reason := strings.TrimPrefix(err.Error(), "redis: ")
	if u, perr := url.Parse(raw); perr == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			reason = strings.ReplaceAll(reason, p, "xxxxx")
		}
	}
	return nil, fmt.Errorf("HERALD_REDIS_URL: %s is not a Redis URL (%s): use %s, e.g. HERALD_REDIS_URL=redis://:password@redis.example.com:6379/0",
		redactURL(raw), reason, redisURLForm)
}

// hostPorts splits a comma-separated list of host:port.
func hostPorts(name, list string) ([]string, error) {
	var out []string
	for a := range strings.SplitSeq(list, ",") {
		a = strings.TrimSpace(a)
		if _, p, err := net.SplitHostPort(a); err != nil || p == "" {
			return nil, fmt.Errorf("%s: %q is not host:port", name, a)
		}
		out = append(out, a)
	}
	return out, nil
}

// redisConnector connects to one checked Redis topology: exactly one of its options is set.
type redisConnector struct {
	single   *redis.Options
	failover *redis.FailoverOptions
	cluster  *redis.ClusterOptions
	name     string // for messages; without the password
}

// newClient makes a client: a *redis.Client for one server; for Sentinel, a failover client
// (also a *redis.Client) that asks the sentinels for the master and follows a failover; for
// Cluster, a *redis.ClusterClient, which routes each command to the node of its hash slot.
func (c redisConnector) newClient() redis.UniversalClient {
	switch {
	case c.failover != nil:
		return redis.NewFailoverClient(c.failover)
	case c.cluster != nil:
		return redis.NewClusterClient(c.cluster)
	}
	return redis.NewClient(c.single)
}

// openStore connects the store to the named Redis and checks it answers. The dispatcher
// and the worker queue on the store's client (asynq's *FromRedisClient constructors) and
// asynqmon reads through it, so one connection pool serves them all and they cannot disagree
// on where Redis is.
func openStore(ctx context.Context, r redisSettings) (*store.Store, func(), error) {
	c, err := r.connector()
	if err != nil {
		return nil, nil, err
	}
	rdb := c.newClient()
	st := store.New(rdb)
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := st.Ping(pingCtx); err != nil {
		_ = rdb.Close()
		return nil, nil, fmt.Errorf("%s does not answer: %w", c.name, err)
	}
	return st, func() { _ = rdb.Close() }, nil
}
