package dev.claimq.api;

import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.MediaType;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Refuses a request whose meaning would be a guess, as a repeated or unknown JSON field is: a query
 * parameter given twice (which one counts?) or that the call does not take (a filter misspelt would
 * silently widen a listing), a body sent to a call that reads none, or a body without a
 * Content-Type on an endpoint that reads only JSON. The claims, whose body is optional, take a bare
 * POST as they always have.
 */
public class AmbiguousRequests {
  // The query parameters each resource method declares, read once per method.
  private static final Map<Method, Set<String>> TAKES = new ConcurrentHashMap<>();
  // Whether each resource method reads a body, read once per method.
  private static final Map<Method, Boolean> BODIES = new ConcurrentHashMap<>();

  @ServerRequestFilter
  public void refuse(
      ContainerRequestContext request, ResourceInfo resource, HttpServerRequest http) {
    // Most calls have no query string: only those that do pay for parsing one into a map.
    if (http.query() != null) {
      refuseValuelessParameters(http.query());
      refuseRepeatedParameters(request);
      refuseUnknownParameters(request, resource);
    }
    refuseUnreadableContentType(request);
    if (hasBody(request) && !takesBody(resource)) {
      // A cancel with {"reason": ...} would cancel and drop the reason: refused, not ignored.
      throw new BadRequestException(
          "body", "This call takes no body: send it without one (Content-Length: 0, or none).");
    }
    if (request.getMediaType() == null && hasBody(request) && !takesAnyType(resource)) {
      throw new NotSupportedException();
    }
  }

  /**
   * Whether the resource method reads the request's body: it has a parameter that is neither a
   * path, query or header parameter nor a context object (those all carry a JAX-RS annotation).
   */
  private static boolean takesBody(ResourceInfo resource) {
    Method method = resource == null ? null : resource.getResourceMethod();
    if (method == null) {
      return true;
    }
    return BODIES.computeIfAbsent(
        method,
        m ->
            Arrays.stream(m.getParameters())
                .anyMatch(
                    parameter ->
                        Arrays.stream(parameter.getAnnotations())
                            .noneMatch(
                                a ->
                                    a.annotationType()
                                        .getPackageName()
                                        .startsWith("jakarta.ws.rs"))));
  }

  /**
   * A parameter sent without a value ("?limit=" or a bare "?limit") says nothing: read as absent it
   * would be a filter silently dropped or a default the client did not ask for. Looked for in the
   * query as sent, since JAX-RS hands an empty value to a resource as no parameter at all.
   */
  private static void refuseValuelessParameters(String query) {
    for (String pair : query.split("&")) {
      int equals = pair.indexOf('=');
      if (!pair.isEmpty() && (equals < 0 || equals == pair.length() - 1)) {
        String name = Params.queryName(equals < 0 ? pair : pair.substring(0, equals));
        throw new BadRequestException(
            name,
            "The query parameter '"
                + Params.shorten(name)
                + "' has no value: give it one, or leave it out.");
      }
    }
  }

  private static void refuseRepeatedParameters(ContainerRequestContext request) {
    for (Map.Entry<String, List<String>> parameter :
        request.getUriInfo().getQueryParameters().entrySet()) {
      if (parameter.getValue().size() > 1) {
        throw new BadRequestException(
            parameter.getKey(),
            "The query parameter '"
                + parameter.getKey()
                + "' is given "
                + parameter.getValue().size()
                + " times: give it once.");
      }
    }
  }

  private static void refuseUnknownParameters(
      ContainerRequestContext request, ResourceInfo resource) {
    Method method = resource == null ? null : resource.getResourceMethod();
    if (method == null) {
      return;
    }
    Set<String> takes = TAKES.computeIfAbsent(method, AmbiguousRequests::queryParameters);
    for (String name : request.getUriInfo().getQueryParameters().keySet()) {
      if (!takes.contains(name)) {
        throw new BadRequestException(
            name,
            "The query parameter '"
                + Params.shorten(name)
                + "' is not one this call takes ("
                + (takes.isEmpty() ? "it takes none" : "it takes " + String.join(", ", takes))
                + "): check its spelling.");
      }
    }
  }

  private static Set<String> queryParameters(Method method) {
    Set<String> names = new LinkedHashSet<>();
    for (Parameter parameter : method.getParameters()) {
      QueryParam query = parameter.getAnnotation(QueryParam.class);
      if (query != null) {
        names.add(query.value());
      }
    }
    return Collections.unmodifiableSet(names);
  }

  /**
   * A Content-Type that is not a media type (empty, ";;", "/") names no reader: a 415 naming it, as
   * RESTEasy answers it itself on the endpoints that read JSON. Without this, the empty one reached
   * getMediaType() below and failed there as the service's own error, on any endpoint.
   */
  private static void refuseUnreadableContentType(ContainerRequestContext request) {
    try {
      request.getMediaType();
    } catch (IllegalArgumentException notAMediaType) {
      throw new NotSupportedException(
          "The Content-Type header '"
              + Params.shorten(request.getHeaderString("Content-Type"))
              + "' is not a media type");
    }
  }

  static boolean hasBody(ContainerRequestContext request) {
    String length = request.getHeaderString("Content-Length");
    return request.getHeaderString("Transfer-Encoding") != null
        || length != null && !length.strip().equals("0");
  }

  private static boolean takesAnyType(ResourceInfo resource) {
    Method method = resource == null ? null : resource.getResourceMethod();
    if (method == null) {
      return true;
    }
    Consumes consumes = method.getAnnotation(Consumes.class);
    if (consumes == null) {
      consumes = method.getDeclaringClass().getAnnotation(Consumes.class);
    }
    return consumes == null || Arrays.asList(consumes.value()).contains(MediaType.WILDCARD);
  }
}
