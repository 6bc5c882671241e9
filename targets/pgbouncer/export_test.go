package pgbouncer

// ConsoleRows is console, for the tests of package pgbouncer_test.
var ConsoleRows = console
