package dev.claimq.api;

import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Path;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The methods each API path takes, read once from the resource classes' annotations, for a 405's
 * Allow header: RFC 9110 (15.5.6) has a 405 name them, and RESTEasy's own 405 does not. HEAD goes
 * with GET and OPTIONS with every path, as RESTEasy answers both for any resource. A resource class
 * left out of RESOURCES answers its 405s without an Allow header; ProblemTest walks every path of
 * the OpenAPI document to catch that.
 */
final class AllowedMethods {
  private static final List<Class<?>> RESOURCES =
      List.of(
          ItemsResource.class,
          QueuesResource.class,
          QueuePolicyResource.class,
          OperatorItemsResource.class,
          BatchFinishResource.class);

  /** A path template's parameter, {name} or {name: regex}. */
  private static final Pattern PARAMETER = Pattern.compile("\\{\\s*\\w+\\s*(?::\\s*([^}]*))?}");

  private record Route(Pattern path, String method) {}

  private static final List<Route> ROUTES = routes();

  private AllowedMethods() {}

  /** The methods the path takes, in order, or an empty set when no resource has this path. */
  static Set<String> at(String path) {
    Set<String> allowed = new TreeSet<>();
    for (Route route : ROUTES) {
      if (route.path.matcher(path).matches()) {
        allowed.add(route.method);
      }
    }
    if (allowed.contains(HttpMethod.GET)) {
      allowed.add(HttpMethod.HEAD);
    }
    if (!allowed.isEmpty()) {
      allowed.add(HttpMethod.OPTIONS);
    }
    return allowed;
  }

  private static List<Route> routes() {
    List<Route> routes = new ArrayList<>();
    for (Class<?> resource : RESOURCES) {
      String base = resource.getAnnotation(Path.class).value();
      for (Method method : resource.getDeclaredMethods()) {
        Path sub = method.getAnnotation(Path.class);
        Pattern path = template(base + (sub == null ? "" : sub.value()));
        for (Annotation annotation : method.getAnnotations()) {
          HttpMethod httpMethod = annotation.annotationType().getAnnotation(HttpMethod.class);
          if (httpMethod != null) {
            routes.add(new Route(path, httpMethod.value()));
          }
        }
      }
    }
    return List.copyOf(routes);
  }

  /** A path template as a pattern: a parameter matches one segment, or its own expression. */
  private static Pattern template(String template) {
    String normalized = ("/" + template).replaceAll("/+", "/");
    StringBuilder pattern = new StringBuilder();
    Matcher parameter = PARAMETER.matcher(normalized);
    int literal = 0;
    while (parameter.find()) {
      pattern.append(Pattern.quote(normalized.substring(literal, parameter.start())));
      pattern.append(parameter.group(1) == null ? "[^/]+" : "(?:" + parameter.group(1) + ")");
      literal = parameter.end();
    }
    pattern.append(Pattern.quote(normalized.substring(literal))).append("/?");
    return Pattern.compile(pattern.toString());
  }
}
