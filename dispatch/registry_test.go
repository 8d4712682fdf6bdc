package dispatch_test

// The tests run with every kind registered, as the programs that serve the API and deliver do.
import _ "github.com/heraldhq/herald/channels/registry"
