package scheduler

// The tests run with every kind registered, as the programs that deliver do.
import _ "github.com/heraldhq/herald/channels/registry"
