package dev.claimq.api;

import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * The methods each API path takes, read once from the resource classes' annotations, for a 405's
 * Allow header (RFC 9110, 15.5.6, has a 405 name them; RESTEasy's own names none) and for the
 * answer to OPTIONS, which RESTEasy gives from every method of the resource class, whatever the
 * path, and for paths that do not exist too. HEAD goes with GET, and OPTIONS with every path. Paths
 * are matched as sent, percent-encoded, as routing matches them: an id holding %2F is one segment.
 * A resource class left out of RESOURCES answers its 405s without an Allow header; ProblemTest
 * walks every path of the OpenAPI document to catch that.
 */
public class AllowedMethods {
  private static final List<Class<?>> RESOURCES =
      List.of(
          ItemsResource.class,
          QueuesResource.class,
          QueuePolicyResource.class,
          OperatorItemsResource.class,
          BatchFinishResource.class);

  /** A path template's parameter, {name} or {name: regex}. */
  private static final Pattern PARAMETER = Pattern.compile("\\{\\s*\\w+\\s*(?::\\s*([^}]*))?}");

  private record Route(String template, Pattern path, String method) {}

  private static final List<Route> ROUTES = routes();

  /**
   * OPTIONS on an API path answers the methods that path takes, with no key needed (it tells
   * nothing the OpenAPI document does not), and a 404 problem where there is no such path.
   */
  @ServerRequestFilter(preMatching = true)
  public Response answerOptions(ContainerRequestContext context) {
    String path = context.getUriInfo().getRequestUri().getRawPath();
    if (!HttpMethod.OPTIONS.equals(context.getMethod()) || !path.startsWith("/v1")) {
      return null; // on to routing
    }
    Set<String> allowed = at(path);
    if (allowed.isEmpty()) {
      throw new NotFoundException();
    }
    return Response.ok().header(HttpHeaders.ALLOW, String.join(", ", allowed)).build();
  }

  /**
   * The methods the path (percent-encoded, as sent) takes, in order, or an empty set when no
   * resource has this path.
   */
  static Set<String> at(String path) {
    String routed = colons(path);
    Set<String> allowed = new TreeSet<>();
    for (Route route : ROUTES) {
      if (route.path.matcher(routed).matches()) {
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

  /**
   * The template of the API path (percent-encoded, as sent) as its resource method declares it,
   * such as /v1/items/{id}/complete; null when no resource has this path.
   */
  static String template(String path) {
    String routed = colons(path);
    for (Route route : ROUTES) {
      if (route.path.matcher(routed).matches()) {
        return route.template;
      }
    }
    return null;
  }

  /** The path as routing reads it: a %3A is a ':' (EncodedColons). */
  private static String colons(String path) {
    return path.replace("%3A", ":").replace("%3a", ":");
  }

  private static List<Route> routes() {
    List<Route> routes = new ArrayList<>();
    for (Class<?> resource : RESOURCES) {
      String base = resource.getAnnotation(Path.class).value();
      for (Method method : resource.getDeclaredMethods()) {
        Path sub = method.getAnnotation(Path.class);
        String template = ("/" + base + (sub == null ? "" : sub.value())).replaceAll("/+", "/");
        Pattern path = pattern(template);
        for (Annotation annotation : method.getAnnotations()) {
          HttpMethod httpMethod = annotation.annotationType().getAnnotation(HttpMethod.class);
          if (httpMethod != null) {
            routes.add(new Route(template, path, httpMethod.value()));
          }
        }
      }
    }
    return List.copyOf(routes);
  }

  /** A path template as a pattern: a parameter matches one segment, or its own expression. */
  private static Pattern pattern(String template) {
    StringBuilder pattern = new StringBuilder();
    Matcher parameter = PARAMETER.matcher(template);
    int literal = 0;
    while (parameter.find()) {
      pattern.append(Pattern.quote(template.substring(literal, parameter.start())));
      pattern.append(parameter.group(1) == null ? "[^/]+" : "(?:" + parameter.group(1) + ")");
      literal = parameter.end();
    }
    pattern.append(Pattern.quote(template.substring(literal))).append("/?");
    return Pattern.compile(pattern.toString());
  }
}
