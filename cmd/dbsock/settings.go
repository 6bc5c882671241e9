package main

import (
	"reflect"

	"github.com/spf13/pflag"

	"github.com/dbsock/dbsock/internal/setting"
	"github.com/dbsock/dbsock/targets"
)

// bindSettings binds every target's flags (targets.Flag) on the fields of
// a value of its settings at their defaults, and returns those values by
// target: once f is parsed, they hold what the command line gave.
func bindSettings(f *pflag.FlagSet) map[string]targets.Settings {
	out := map[string]targets.Settings{}
	for _, t := range targets.List() {
		s := t.Settings()
		for _, fl := range t.Flags {
			bindField(f, s, fl)
		}
		out[t.Name] = s
	}
	return out
}

// bindField binds flag fl on its field of s, with the field's value as the
// default (targets.Register has checked that the field is a string, int or
// bool).
func bindField(f *pflag.FlagSet, s targets.Settings, fl targets.Flag) {
	switch p := reflect.ValueOf(s).Elem().FieldByName(fl.Field).Addr().Interface().(type) {
	case *string:
		f.StringVar(p, fl.Name, *p, fl.Help)
	case *int:
		f.IntVar(p, fl.Name, *p, fl.Help)
	case *bool:
		f.BoolVar(p, fl.Name, *p, fl.Help)
	}
}

// settingFlag is the flag that sets f, a field of a target's settings
// (targets.Field), or "" when no flag does.
func settingFlag(f setting.Field) string {
	name, field, ok := targets.FieldOf(f)
	if !ok {
		return ""
	}
	t, ok := targets.Lookup(name)
	if !ok {
		return ""
	}
	for _, fl := range t.Flags {
		if fl.Field == field {
			return "--" + fl.Name
		}
	}
	return ""
}
