package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/text/language"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// localeLang is the language of the POSIX locale: the first of LC_ALL, LC_MESSAGES and LANG
// that is set decides (ja_JP.UTF-8 is ja, ko_KR.UTF-8 is ko); C, POSIX, an unset locale or a
// language sidecarlab does not speak is English.
func localeLang(getenv func(string) string) string {
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(name); v != "" {
			return matchLocale(v)
		}
	}
	return i18n.Default
}

// matchLocale matches a locale name (language[_territory][.codeset][@modifier]) by its
// language and territory, with x/text's matcher.
func matchLocale(locale string) string {
	locale, _, _ = strings.Cut(locale, ".")
	locale, _, _ = strings.Cut(locale, "@")
	if locale == "" || locale == "C" || locale == "POSIX" || len(locale) > 35 {
		return i18n.Default
	}
	tag, err := language.Parse(strings.ReplaceAll(locale, "_", "-"))
	if err != nil {
		return i18n.Default
	}
	return i18n.Match(tag)
}

// langFlag is the value --lang gives in args, "" when it is not given. The commands' help is
// built before cobra reads the flags, so the flag is read ahead; cobra reads it again (the
// persistent flag) and checkLang refuses a value that is not a language.
func langFlag(args []string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if rest, ok := strings.CutPrefix(a, "--lang="); ok {
			v = rest
		} else if a == "--lang" && i+1 < len(args) {
			v = args[i+1]
			i++
		}
	}
	return v
}

// cliLang is the language the CLI speaks: --lang when it names one, else the locale's.
func cliLang(args []string, getenv func(string) string) string {
	if v := langFlag(args); isLang(v) {
		return v
	}
	return localeLang(getenv)
}

func isLang(code string) bool {
	for _, c := range i18n.Codes {
		if c == code {
			return true
		}
	}
	return false
}

// langFlagRegister adds the persistent --lang flag; checkLang is a usage error for a value that
// is no language sidecarlab speaks.
func langFlagRegister(c *cli, root *cobra.Command, p *string) {
	root.PersistentFlags().StringVar(p, "lang", "", c.T("cli.flag.lang"))
	_ = root.RegisterFlagCompletionFunc("lang", cobra.FixedCompletions(i18n.Codes, cobra.ShellCompDirectiveNoFileComp))
}

func checkLang(c *cli, v string) error {
	if v == "" || isLang(v) {
		return nil
	}
	return usageError{c.T("cli.error.lang", "Value", fmt.Sprintf("%q", v), "Choices", c.orList(i18n.Codes))}
}
