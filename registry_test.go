package herald_test

// The root package's tests run with every kind registered, as a program that imports the
// registry of kinds does.
import _ "github.com/heraldhq/herald/channels/registry"
