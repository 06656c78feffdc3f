package dev.claimq.observability;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Reads the metric names out of a PromQL expression, as far as the alert rules and the dashboard
 * need: enough to check them against a real scrape without a PromQL parser in Java. An identifier
 * is a metric name unless it calls something ({@code rate(}), is a keyword or an aggregation
 * ({@code sum by (queue)}), or sits in a label list, a matcher, a range or a string. Grafana's
 * variables ({@code $queue}, {@code $__rate_interval}) are never names. The syntax itself is left
 * to Prometheus: promtool checks the rules, and PrometheusTest has Prometheus parse every panel.
 */
final class PromQl {
  private PromQl() {}

  /** A metric name and the label names its selector matches on ({@code up{job="x"}}: job). */
  record Selector(String metric, Set<String> labels) {}

  // Aggregations, binary-operator keywords, modifiers and the special numbers: none is a metric.
  private static final Set<String> KEYWORDS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "group",
          "stddev",
          "stdvar",
          "count",
          "count_values",
          "bottomk",
          "topk",
          "quantile",
          "limitk",
          "limit_ratio",
          "and",
          "or",
          "unless",
          "atan2",
          "bool",
          "offset",
          "by",
          "without",
          "on",
          "ignoring",
          "group_left",
          "group_right",
          "inf",
          "nan",
          "start",
          "end");

  // Keywords followed by a parenthesised list of label names, not of expressions.
  private static final Set<String> LABEL_LISTS =
      Set.of("by", "without", "on", "ignoring", "group_left", "group_right");

  /** The metric names the expression selects, in the order they first appear. */
  static Set<String> metricNames(String expression) {
    Set<String> names = new LinkedHashSet<>();
    for (Selector selector : selectors(expression)) {
      names.add(selector.metric());
    }
    return names;
  }

  /** Every selector of a named metric in the expression, in order, with its matchers' labels. */
  static List<Selector> selectors(String expression) {
    List<Selector> found = new ArrayList<>();
    String e = expression;
    int i = 0;
    while (i < e.length()) {
      char c = e.charAt(i);
      if (c == '"' || c == '\'' || c == '`') {
        i = afterString(e, i);
      } else if (c == '#') {
        i = afterLine(e, i);
      } else if (c == '[') {
        i = after(e, i, ']');
      } else if (c == '{') {
        i = after(e, i, '}'); // a selector with no name, {__name__="..."}: none used here
      } else if (c == '$') {
        i = afterVariable(e, i);
      } else if (Character.isDigit(c) || c == '.') {
        i = afterNumber(e, i); // numbers and durations: 0.99, 1e3, 5m
      } else if (startsIdentifier(c)) {
        int end = afterWord(e, i);
        String word = e.substring(i, end);
        int next = skipSpace(e, end);
        String lower = word.toLowerCase(Locale.ROOT);
        if (LABEL_LISTS.contains(lower) && next < e.length() && e.charAt(next) == '(') {
          i = after(e, next, ')');
        } else if (KEYWORDS.contains(lower) || (next < e.length() && e.charAt(next) == '(')) {
          i = end; // a function call or a keyword
        } else if (next < e.length() && e.charAt(next) == '{') {
          int close = after(e, next, '}');
          found.add(new Selector(word, matcherLabels(e.substring(next + 1, close - 1))));
          i = close;
        } else {
          found.add(new Selector(word, Set.of()));
          i = end;
        }
      } else {
        i++;
      }
    }
    return found;
  }

  /** The label names in the inside of a selector's braces: {@code queue=~"$queue",state="x"}. */
  private static Set<String> matcherLabels(String matchers) {
    Set<String> labels = new LinkedHashSet<>();
    int i = 0;
    while (i < matchers.length()) {
      char c = matchers.charAt(i);
      if (c == '"' || c == '\'' || c == '`') {
        i = afterString(matchers, i);
      } else if (startsIdentifier(c)) {
        int end = afterWord(matchers, i);
        labels.add(matchers.substring(i, end));
        i = end;
      } else {
        i++;
      }
    }
    return labels;
  }

  private static boolean startsIdentifier(char c) {
    return Character.isLetter(c) || c == '_' || c == ':';
  }

  private static int afterWord(String e, int i) {
    int j = i;
    while (j < e.length()
        && (Character.isLetterOrDigit(e.charAt(j)) || "_:".indexOf(e.charAt(j)) >= 0)) {
      j++;
    }
    return j;
  }

  private static int afterNumber(String e, int i) {
    int j = i;
    while (j < e.length() && (Character.isLetterOrDigit(e.charAt(j)) || e.charAt(j) == '.')) {
      j++;
    }
    return j;
  }

  private static int skipSpace(String e, int i) {
    int j = i;
    while (j < e.length() && Character.isWhitespace(e.charAt(j))) {
      j++;
    }
    return j;
  }

  private static int afterLine(String e, int i) {
    int newline = e.indexOf('\n', i);
    return newline < 0 ? e.length() : newline + 1;
  }

  /** Past a quoted string, honouring backslash escapes (none in backquoted raw strings). */
  private static int afterString(String e, int i) {
    char quote = e.charAt(i);
    int j = i + 1;
    while (j < e.length() && e.charAt(j) != quote) {
      j += quote != '`' && e.charAt(j) == '\\' ? 2 : 1;
    }
    return Math.min(j + 1, e.length());
  }

  /** Past the bracket that closes the one at i, skipping strings inside. */
  private static int after(String e, int i, char close) {
    int j = i + 1;
    while (j < e.length() && e.charAt(j) != close) {
      char c = e.charAt(j);
      j = c == '"' || c == '\'' || c == '`' ? afterString(e, j) : j + 1;
    }
    return Math.min(j + 1, e.length());
  }

  /** Past a Grafana variable: $name, ${name} or ${name:format}. */
  private static int afterVariable(String e, int i) {
    if (i + 1 < e.length() && e.charAt(i + 1) == '{') {
      return after(e, i + 1, '}');
    }
    int j = i + 1;
    while (j < e.length() && (Character.isLetterOrDigit(e.charAt(j)) || e.charAt(j) == '_')) {
      j++;
    }
    return j;
  }
}
