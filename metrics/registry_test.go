package metrics_test

// The tests run with every kind registered, as the programs that serve metrics do.
import _ "github.com/heraldhq/herald/channels/registry"
