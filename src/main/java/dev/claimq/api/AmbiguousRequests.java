package dev.claimq.api;

import dev.claimq.telemetry.LogText;
import io.vertx.core.http.HttpServerRequest;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.NotSupportedException;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.MediaType;
import java.lang.annotation.Annotation;
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
  // What each resource method takes, read from its signature once per method.
  private static final Map<Method, Takes> TAKES = new ConcurrentHashMap<>();

  /**
   * What a resource method takes: the query parameters it declares, whether it reads a body,
   * whether it reads a body of any media type, and whether it evaluates If-Match (it documents the
   * IfMatch parameter: its answers carry an ETag).
   */
  private record Takes(
      Set<String> queryParameters, boolean body, boolean anyType, boolean ifMatch) {
    // A request matched to no resource method is RESTEasy's to answer (a 404 or a 405).
    static final Takes UNKNOWN = new Takes(Set.of(), true, true, true);

    static Takes of(ResourceInfo resource) {
      Method method = resource == null ? null : resource.getResourceMethod();
      return method == null ? UNKNOWN : TAKES.computeIfAbsent(method, Takes::read);
    }

    private static Takes read(Method method) {
      Set<String> query = new LinkedHashSet<>();
      boolean body = false;
      for (Parameter parameter : method.getParameters()) {
        QueryParam name = parameter.getAnnotation(QueryParam.class);
        if (name != null) {
          query.add(name.value());
        }
        // Path, query and header parameters and context objects all carry a JAX-RS annotation;
        // a parameter without one is the body.
        body |= Arrays.stream(parameter.getAnnotations()).noneMatch(Takes::isJaxRs);
      }
      Consumes consumes = method.getAnnotation(Consumes.class);
      if (consumes == null) {
        consumes = method.getDeclaringClass().getAnnotation(Consumes.class);
      }
      boolean anyType =
          consumes == null || Arrays.asList(consumes.value()).contains(MediaType.WILDCARD);
      boolean ifMatch =
          Arrays.stream(
                  method.getAnnotationsByType(
                      org.eclipse.microprofile.openapi.annotations.parameters.Parameter.class))
              .anyMatch(documented -> documented.ref().equals("IfMatch"));
      return new Takes(Collections.unmodifiableSet(query), body, anyType, ifMatch);
    }

    private static boolean isJaxRs(Annotation annotation) {
      return annotation.annotationType().getPackageName().startsWith("jakarta.ws.rs");
    }
  }

  @ServerRequestFilter
  public void refuse(
      ContainerRequestContext request, ResourceInfo resource, HttpServerRequest http) {
    Takes takes = Takes.of(resource);
    // Most calls have no query string: only those that do pay for parsing one into a map.
    if (http.query() != null) {
      refuseValuelessParameters(http.query());
      refuseRepeatedParameters(request);
      refuseUnknownParameters(request, takes);
    }
    refuseUnreadableContentType(request);
    if (!takes.ifMatch() && request.getHeaders().containsKey(EntityTags.IF_MATCH)) {
      refuseIfMatch(request);
    }
    if (request.getHeaders().containsKey(EntityTags.IF_NONE_MATCH)) {
      refuseIfNoneMatch(request, takes);
    }
    if (hasBody(request) && !takes.body()) {
      // A cancel with {"reason": ...} would cancel and drop the reason: refused, not ignored.
      throw new BadRequestException(
          "body", "This call takes no body: send it without one (Content-Length: 0, or none).");
    }
    if (request.getMediaType() == null && hasBody(request) && !takes.anyType()) {
      throw new NotSupportedException();
    }
    // RESTEasy reads a range (*/*, application/*) or any +json type with the JSON reader: the
    // document names application/json only, and a range is no type at all (it belongs in Accept).
    if (takes != Takes.UNKNOWN && takes.body() && hasBody(request) && !isJson(request)) {
      throw new NotSupportedException();
    }
  }

  private static boolean isJson(ContainerRequestContext request) {
    MediaType type = request.getMediaType();
    return type == null
        || type.getType().equalsIgnoreCase("application")
            && type.getSubtype().equalsIgnoreCase("json");
  }

  /**
   * An If-Match on a call whose answers carry no entity tag: RFC 9110 (13.1.1) has the server
   * evaluate it all the same, and no tag can match a representation that has none, so only * is
   * met. Ignored, it would let a client believe its change was conditional.
   */
  private static void refuseIfMatch(ContainerRequestContext request) {
    if (EntityTags.tags(EntityTags.IF_MATCH, request.getHeaders().get(EntityTags.IF_MATCH))
        != null) {
      throw new Outcomes.RefusedException(
          new Outcomes.Status(412, "precondition-failed", "Precondition failed"),
          "This call's answers carry no entity tag, so the entity tags If-Match names cannot"
              + " match and nothing was done. Only a queue's policy (its read, PUT, pause and"
              + " resume) and an item (its read, and an operator's retry, cancel, resolve,"
              + " approve or reject of it) have an ETag; elsewhere send no If-Match (or *).");
    }
  }

  /**
   * An If-None-Match, which RFC 9110 (13.1.2) has the server evaluate, not drop: on a read (any
   * read, * included) it is answered by NotModified. On a change, * asks that the target have no
   * representation, and each of these has one (an item, a queue, a policy at its defaults): 412,
   * nothing done. Entity tags on a change of something with an ETag would need the change to be
   * made only while it is at none of them, which no statement here does: refused with 400 rather
   * than dropped, pointing at If-Match. On a change of something without an ETag no tag can match,
   * so the change goes on.
   */
  private static void refuseIfNoneMatch(ContainerRequestContext request, Takes takes) {
    List<EntityTags.Tag> tags =
        EntityTags.tags(
            EntityTags.IF_NONE_MATCH, request.getHeaders().get(EntityTags.IF_NONE_MATCH));
    String method = request.getMethod();
    if (method.equals("GET") || method.equals("HEAD")) {
      return;
    }
    if (tags == null) {
      throw new Outcomes.RefusedException(
          new Outcomes.Status(412, "precondition-failed", "Precondition failed"),
          "If-None-Match: * is met only where the target has no representation, and this one"
              + " has: nothing was done. Send no If-None-Match; to act only on the version a read"
              + " answered, send its ETag in If-Match.");
    }
    if (takes.ifMatch()) {
      throw new BadRequestException(
          EntityTags.IF_NONE_MATCH,
          "'If-None-Match' with entity tags is not evaluated on a change here: to act only on the"
              + " version a read answered, send its ETag in If-Match instead.");
    }
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
                + LogText.shortened(name)
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

  private static void refuseUnknownParameters(ContainerRequestContext request, Takes call) {
    if (call == Takes.UNKNOWN) {
      return;
    }
    Set<String> takes = call.queryParameters();
    for (String name : request.getUriInfo().getQueryParameters().keySet()) {
      if (!takes.contains(name)) {
        throw new BadRequestException(
            name,
            "The query parameter '"
                + LogText.shortened(name)
                + "' is not one this call takes ("
                + (takes.isEmpty() ? "it takes none" : "it takes " + String.join(", ", takes))
                + "): check its spelling.");
      }
    }
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
              + LogText.shortened(request.getHeaderString("Content-Type"))
              + "' is not a media type");
    }
  }

  static boolean hasBody(ContainerRequestContext request) {
    return declaresBody(
        request.getHeaderString("Transfer-Encoding"), request.getHeaderString("Content-Length"));
  }

  /** Whether these headers (each null when absent) say a body follows. For /mcp too. */
  public static boolean declaresBody(String transferEncoding, String contentLength) {
    return transferEncoding != null || contentLength != null && !contentLength.strip().equals("0");
  }
}
