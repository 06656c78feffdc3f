package dev.claimq.api;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.InvalidNullException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import dev.claimq.security.QueueNotAllowedException;
import dev.claimq.store.DatabaseErrors;
import dev.claimq.telemetry.LogText;
import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.ElementKind;
import jakarta.validation.Path;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.ws.rs.NotAllowedException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.lang.reflect.Method;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * Every error leaves the service as RFC 9457 problem+json, from here. Expected client errors are
 * logged at DEBUG; only the unexpected is logged loudly, and never echoed to the client.
 */
public class ProblemMappers {
  private static final Logger LOG = Logger.getLogger(ProblemMappers.class);

  /** What every 503 tells a client to wait before it asks again: the least, not a promise. */
  public static final String RETRY_AFTER_SECONDS = "1";

  /**
   * The problem the API would answer for this exception, for a transport that is not REST (the MCP
   * tools), chosen as the mappers below are chosen for REST, and logged as they log it: a client's
   * mistake at DEBUG, only the unexpected as an ERROR.
   */
  public static Problem problemOf(Throwable e) {
    ProblemMappers mappers = new ProblemMappers();
    RestResponse<Problem> response;
    if (e instanceof Outcomes.RefusedException refused) {
      response = mappers.refused(refused);
    } else if (e instanceof TooLargeException tooLarge) {
      response = mappers.tooLarge(tooLarge);
    } else if (e instanceof BadRequestException bad) {
      response = mappers.badParameter(bad);
    } else if (e instanceof ConstraintViolationException invalid) {
      response = mappers.invalid(invalid);
    } else if (e instanceof JsonProcessingException json) {
      response = mappers.unreadableBody(json);
    } else if (e instanceof ForbiddenException forbidden) {
      response = mappers.forbidden(forbidden, null);
    } else if (e instanceof UnauthorizedException || e instanceof AuthenticationFailedException) {
      response = mappers.unauthorized((RuntimeException) e);
    } else {
      response = mappers.unexpected(e);
    }
    return response.getEntity();
  }

  @ServerExceptionMapper
  public RestResponse<Problem> refused(Outcomes.RefusedException e) {
    return problem(e.status.code(), e.status.slug(), e.status.title(), e.getMessage(), null);
  }

  @ServerExceptionMapper
  public RestResponse<Problem> tooLarge(TooLargeException e) {
    return problem(413, "too-large", "Request too large", e.getMessage(), null);
  }

  @ServerExceptionMapper
  public RestResponse<Problem> badParameter(BadRequestException e) {
    return problem(
        400,
        "invalid-request",
        "Invalid request",
        e.getMessage(),
        List.of(new Problem.FieldError(e.field, e.getMessage())));
  }

  @ServerExceptionMapper
  public RestResponse<Problem> invalid(ConstraintViolationException e) {
    List<Problem.FieldError> errors =
        e.getConstraintViolations().stream()
            .map(v -> new Problem.FieldError(fieldName(v), v.getMessage()))
            .sorted(Comparator.comparing(Problem.FieldError::field))
            .toList();
    String detail =
        errors.stream()
            .map(error -> error.field() + " " + error.message())
            .collect(Collectors.joining("; ", "The request is invalid: ", "."));
    return problem(400, "invalid-request", "Invalid request", detail, errors);
  }

  @ServerExceptionMapper({
    JsonProcessingException.class,
    JsonParseException.class,
    JsonMappingException.class,
    MismatchedInputException.class,
    InvalidFormatException.class,
    UnrecognizedPropertyException.class
  })
  public RestResponse<Problem> unreadableBody(JsonProcessingException e) {
    RestResponse<Problem> fromStream = problemWhileReading(e);
    if (fromStream != null) {
      return fromStream;
    }
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof InvalidNullException nulled) {
        String field = jsonPath(nulled);
        return problem(
            400,
            "invalid-request",
            "Invalid request",
            "The value of '" + field + "' must not be null: leave it out to take its default.",
            List.of(new Problem.FieldError(field, "must not be null")));
      }
      if (cause instanceof StrictJson.NumberTooLong tooLong) {
        // Placed by no record, so the body itself is that number.
        return problem(
            400,
            "invalid-request",
            "Invalid request",
            "The body " + tooLong.getOriginalMessage() + ".",
            List.of(new Problem.FieldError("body", tooLong.getOriginalMessage())));
      }
      if (cause instanceof StrictJson.NestedTooDeep deep) {
        // Named by the field that holds it, as any value that cannot be read, not by the path
        // down its thousand levels; as the MCP envelope names it (ToolArguments).
        String field = e instanceof JsonMappingException mapping ? jsonPath(mapping) : "";
        String reason = deep.getOriginalMessage();
        return field.isEmpty()
            ? malformed("The body " + reason + ".", new Problem.FieldError("body", reason))
            : malformed(
                "The value of '" + field + "' " + reason + ".",
                new Problem.FieldError(field, reason));
      }
      if (cause instanceof JsonParseException syntax && brokenKey(syntax)) {
        // Jackson refuses a lone surrogate in a key as it parses, before StrictJson sees it.
        String at =
            syntax.getProcessor() == null ? "" : StrictJson.containerOf(syntax.getProcessor());
        String reason =
            "has a key that is not valid Unicode: a lone surrogate (send the character itself, or"
                + " its escaped surrogate pair)";
        String field = at.isEmpty() ? "body" : at;
        return problem(
            400,
            "invalid-request",
            "Invalid request",
            (at.isEmpty() ? "The body " : "The value of '" + at + "' ") + reason + ".",
            List.of(new Problem.FieldError(field, reason)));
      }
      if (cause instanceof InputCoercionException
          && e instanceof JsonMappingException mapping
          && !jsonPath(mapping).isEmpty()) {
        String field = jsonPath(mapping);
        String reason = "must be a whole number" + range(mapping);
        return malformed(
            "The value of '" + field + "' " + reason + ".", new Problem.FieldError(field, reason));
      }
      if (cause instanceof UnstorableValueException unstorable) {
        String field = jsonPath(unstorable) + unstorable.inside;
        if (field.startsWith(".")) {
          field = field.substring(1); // placed from the body's root: ".payload"
        }
        String detail = "The value of '" + field + "' " + unstorable.reason + ".";
        return problem(
            400,
            "invalid-request",
            "Invalid request",
            detail,
            List.of(new Problem.FieldError(field, unstorable.reason)));
      }
    }
    return malformed(describeJsonError(e), fieldError(e));
  }

  /** Jackson's refusal of a key holding a lone surrogate, high or low. */
  private static boolean brokenKey(JsonParseException syntax) {
    String message = String.valueOf(syntax.getOriginalMessage());
    return message.contains("surrogate") && message.contains("in field name");
  }

  /**
   * The bounds the field's own @Min and @Max set, as " from -32768 to 32767", for a number past
   * what its Java type holds; "" when the field has none.
   */
  private static String range(JsonMappingException mapping) {
    JsonMappingException.Reference last = mapping.getPath().get(mapping.getPath().size() - 1);
    Object from = last.getFrom();
    Class<?> type = from instanceof Class<?> declared ? declared : from.getClass();
    try {
      java.lang.reflect.Field field = type.getDeclaredField(String.valueOf(last.getFieldName()));
      Min min = field.getAnnotation(Min.class);
      Max max = field.getAnnotation(Max.class);
      return min == null || max == null ? "" : " from " + min.value() + " to " + max.value();
    } catch (NoSuchFieldException notARecordField) {
      return "";
    }
  }

  /**
   * The field a body that parsed but did not map names (an unknown one, or a value of the wrong
   * kind), for errors[] as every other 400 about a field has it; null for broken JSON.
   */
  private static Problem.FieldError fieldError(JsonProcessingException e) {
    String twice = namedTwice(e);
    if (twice != null) {
      return new Problem.FieldError(twice, "is named twice in one object");
    }
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof JsonParseException) {
        return null;
      }
    }
    if (!(e instanceof JsonMappingException mapping) || jsonPath(mapping).isEmpty()) {
      return null;
    }
    String message =
        e instanceof UnrecognizedPropertyException
            ? "is not a field here"
            : e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null
                ? "must be " + describe(mismatch.getTargetType())
                : "cannot be read";
    return new Problem.FieldError(jsonPath(mapping), message);
  }

  /**
   * Where the field named twice is, as a path (items[1].dedupeKey); null when e is not about one,
   * or does not say where. The parser stopped at the second name, so where it stands says.
   */
  private static String namedTwice(JsonProcessingException e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof JsonParseException syntax
          && String.valueOf(syntax.getOriginalMessage()).startsWith("Duplicate field")) {
        return syntax.getProcessor() == null ? null : StrictJson.pathOf(syntax.getProcessor());
      }
    }
    return null;
  }

  /** The body's own stream refused it while a reader was reading: too large, or not UTF-8. */
  private RestResponse<Problem> problemWhileReading(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof TooLargeException tooLarge) {
        return tooLarge(tooLarge);
      }
      if (cause instanceof BadRequestException bad) {
        return badParameter(bad);
      }
    }
    return null;
  }

  private static String describeJsonError(JsonProcessingException e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof JsonParseException syntax) {
        e = syntax; // broken JSON: where it broke is the useful answer
        break;
      }
    }
    if (e instanceof UnrecognizedPropertyException unknown) {
      return "Unknown field '"
          + unknown.getPropertyName()
          + "'"
          + at(unknown)
          + ": check its spelling.";
    }
    if (e instanceof MismatchedInputException trailing
        && String.valueOf(trailing.getOriginalMessage()).startsWith("Trailing token")) {
      return "The body holds more than one JSON value: remove what follows the first"
          + where(trailing)
          + ".";
    }
    if (e instanceof MismatchedInputException mismatch && mismatch.getTargetType() != null) {
      String expected = describe(mismatch.getTargetType());
      return jsonPath(mismatch).isEmpty()
          ? "The body must be " + expected + "."
          : "The value of '" + jsonPath(mismatch) + "' must be " + expected + ".";
    }
    if (e instanceof JsonMappingException mapping && !jsonPath(mapping).isEmpty()) {
      return "The value of '" + jsonPath(mapping) + "' cannot be read.";
    }
    if (e instanceof JsonParseException
        && String.valueOf(e.getOriginalMessage()).startsWith("Duplicate field")) {
      String twice = namedTwice(e);
      return "The body names a field twice in one object ("
          + (twice == null
              ? e.getOriginalMessage().substring("Duplicate ".length())
              : "'" + twice + "'")
          + where(e)
          + "): an ambiguous document is refused, not guessed.";
    }
    if (e instanceof JsonParseException && e.getLocation() != null) {
      return "The body is not valid JSON (line "
          + e.getLocation().getLineNr()
          + ", column "
          + e.getLocation().getColumnNr()
          + ").";
    }
    return "The body is not valid JSON.";
  }

  /** A 405 names the methods the resource takes, in its Allow header and its detail. */
  @ServerExceptionMapper
  public RestResponse<Problem> notAllowed(NotAllowedException e, UriInfo uri) {
    Set<String> allowed = AllowedMethods.at(uri.getRequestUri().getRawPath());
    if (allowed.isEmpty()) {
      return http(e, null);
    }
    String methods = String.join(", ", allowed);
    RestResponse<Problem> problem =
        problem(
            405,
            "about:blank",
            "Method Not Allowed",
            "This resource takes " + methods + " only; see /q/swagger-ui for the API.",
            null);
    return RestResponse.ResponseBuilder.fromResponse(problem)
        .header(HttpHeaders.ALLOW, methods)
        .build();
  }

  @ServerExceptionMapper
  public RestResponse<Problem> http(WebApplicationException e, HttpHeaders headers) {
    if (e.getCause() instanceof JsonProcessingException json) {
      return unreadableBody(json); // Quarkus REST wraps some reading errors in a plain 400
    }
    RestResponse<Problem> fromStream = problemWhileReading(e);
    if (fromStream != null) {
      return fromStream;
    }
    Response response = e.getResponse();
    int status = response.getStatus();
    if (status >= 500) {
      return unexpected(e);
    }
    String reason = response.getStatusInfo().getReasonPhrase();
    String detail =
        switch (status) {
          case 404 -> "There is no such resource; see /q/swagger-ui for the API.";
          case 405 -> "This resource does not accept that method; see /q/swagger-ui for the API.";
          case 406 -> notAcceptable(headers);
          case 415 -> unsupported(headers);
          default -> reason + ".";
        };
    return problem(status, "about:blank", reason, detail, null);
  }

  /** A 406's detail, naming the Accept header that was sent. */
  private static String notAcceptable(HttpHeaders headers) {
    String sent = headers == null ? null : headers.getHeaderString(HttpHeaders.ACCEPT);
    String badWeight = sent == null ? null : AcceptableAnswers.badWeight(sent);
    if (badWeight != null) {
      return badWeight;
    }
    return sent == null
        ? "This resource answers application/json only."
        : "This resource answers application/json only, and the Accept header "
            + AcceptableAnswers.quoted(sent)
            + " does not take it: accept application/json (or */*), or send no Accept header.";
  }

  /** A 415's detail, naming the Content-Type that was sent, if one was. */
  private static String unsupported(HttpHeaders headers) {
    String types =
        headers == null
            ? null
            : BodyEncoding.whyNotOneType(headers.getRequestHeader(HttpHeaders.CONTENT_TYPE));
    if (types != null) {
      return types;
    }
    String sent = headers == null ? null : headers.getHeaderString(HttpHeaders.CONTENT_TYPE);
    return sent == null
        ? "Send the body as application/json, with Content-Type: application/json."
        : "The Content-Type header '"
            + LogText.oneLine(LogText.shortened(sent))
            + "' is not application/json: send the body as application/json.";
  }

  @ServerExceptionMapper({UnauthorizedException.class, AuthenticationFailedException.class})
  public RestResponse<Problem> unauthorized(RuntimeException e) {
    RestResponse<Problem> response =
        problem(
            401,
            "unauthorized",
            "Unauthorized",
            e instanceof AuthenticationFailedException
                ? "This API key is not known here. Send a valid key as Authorization: Bearer <key>."
                : "This endpoint needs an API key: send Authorization: Bearer <key>.",
            null);
    return RestResponse.ResponseBuilder.fromResponse(response)
        .header("WWW-Authenticate", "Bearer realm=\"claimq\"")
        .build();
  }

  @ServerExceptionMapper
  public RestResponse<Problem> forbidden(ForbiddenException e, ResourceInfo resource) {
    String detail =
        e instanceof QueueNotAllowedException
            ? e.getMessage()
            : "This API key does not have the role this endpoint needs (" + roles(resource) + ").";
    return problem(403, "forbidden", "Forbidden", detail, null);
  }

  @ServerExceptionMapper
  public RestResponse<Problem> unexpected(Throwable e) {
    if (clientGone(e)) {
      LOG.debugf("client closed the connection: %s", LogText.oneLine(DatabaseErrors.describe(e)));
      return problem(
          400, "client-closed", "Client closed the connection", "No one to answer.", null);
    }
    if (DatabaseErrors.readOnly(e)) {
      return databaseUnavailable(
          "database refuses writes",
          e,
          "The queue's database refuses writes right now (it is read-only: a replica, or a"
              + " failover not finished), so nothing was changed; reads still work. Retry"
              + " shortly.");
    }
    if (DatabaseErrors.timedOut(e)) {
      return databaseUnavailable(
          "database too slow",
          e,
          "The queue's database did not finish this request's statement within its time bound"
              + " (it is overloaded, or waiting on a lock), so the statement was cancelled and"
              + " nothing was changed; retry shortly.");
    }
    if (DatabaseErrors.rolledBack(e)) {
      return databaseUnavailable(
          "database rolled a request back",
          e,
          "The queue's database rolled this request's transaction back (to break a deadlock"
              + " with another, or because it could not serialize it), so nothing was changed;"
              + " retry shortly.");
    }
    String exhausted = DatabaseErrors.exhausted(e);
    if (exhausted != null) {
      return databaseUnavailable(
          "database out of " + exhausted,
          e,
          "The queue's database is out of "
              + exhausted
              + " right now, so this request was not carried out and nothing was changed"
              + (exhausted.equals("disk space")
                  ? "; nothing can be written until its operator frees some. Retry later."
                  : "; retry shortly."));
    }
    if (DatabaseErrors.poolBusy(e)) {
      return databaseUnavailable(
          "every database connection busy",
          e,
          "Every connection this service has to the queue's database is busy (its statements are"
              + " slow, or wait on a lock), and none came free in time, so this request was not"
              + " run; retry shortly.");
    }
    if (DatabaseErrors.unavailable(e)) {
      return databaseUnavailable(
          "database unavailable",
          e,
          "The queue's database cannot be reached right now; retry shortly. If the database went"
              + " away while this change was committing, it may or may not have taken effect:"
              + " repeating the call is safe (enqueues are deduplicated, and a repeated complete"
              + " or fail with the same token answers the same).");
    }
    LOG.error("unexpected error", e);
    return problem(
        500,
        "internal-error",
        "Internal error",
        "The service failed to handle this request; it has been logged.",
        null);
  }

  /** A 503 for a database that cannot take the request now: logged as a WARN, not an ERROR. */
  private static RestResponse<Problem> databaseUnavailable(
      String what, Throwable e, String detail) {
    LOG.warnf("%s: %s", what, LogText.oneLine(DatabaseErrors.describe(e)));
    return problem(503, "database-unavailable", "Database unavailable", detail, null);
  }

  /**
   * A request whose client hung up before the answer, while its body was still being read or after:
   * not the service's fault, and nobody to tell.
   */
  private static boolean clientGone(Throwable e) {
    return DatabaseErrors.causesOf(e).stream()
        .anyMatch(
            cause ->
                cause instanceof io.vertx.core.http.HttpClosedException
                    || cause instanceof java.nio.channels.ClosedChannelException);
  }

  /** The roles that may call the resource method, as @RolesAllowed names them. */
  private static String roles(ResourceInfo resource) {
    Method method = resource == null ? null : resource.getResourceMethod();
    RolesAllowed allowed = method == null ? null : method.getAnnotation(RolesAllowed.class);
    return allowed == null ? "none" : String.join(" or ", allowed.value());
  }

  private static RestResponse<Problem> malformed(String detail, Problem.FieldError field) {
    return problem(
        400,
        "malformed-request",
        "Malformed request body",
        detail,
        field == null ? null : List.of(field));
  }

  static RestResponse<Problem> problem(
      int status, String slug, String title, String detail, List<Problem.FieldError> errors) {
    if (status < 500) {
      LOG.debugf("%d %s: %s", status, title, LogText.oneLine(detail));
    }
    RestResponse.ResponseBuilder<Problem> answer =
        RestResponse.ResponseBuilder.<Problem>create(status)
            .entity(Problem.of(status, slug, title, detail, errors))
            .type(Problem.MEDIA_TYPE);
    if (status == 503) {
      // Every 503 is over in moments or never for this instance; a client's retry policy that
      // reads the header (most generated clients') waits a second, then backs off as it would.
      answer.header("Retry-After", RETRY_AFTER_SECONDS);
    }
    return answer.build();
  }

  /**
   * A constraint's field as the client named it, as a JSON path in the one spelling every answer
   * uses: dedupeKey, next.waitSeconds, or an entry of a batch by its index, items[1].priority
   * (items[1] for the entry itself). A missing body is reported on the method parameter itself.
   */
  private static String fieldName(ConstraintViolation<?> violation) {
    List<Path.Node> nodes =
        StreamSupport.stream(violation.getPropertyPath().spliterator(), false).toList();
    if (nodes.get(nodes.size() - 1).getKind() == ElementKind.PARAMETER) {
      return "body";
    }
    StringBuilder name = new StringBuilder();
    for (Path.Node node : nodes) {
      switch (node.getKind()) {
        case PROPERTY, CONTAINER_ELEMENT, BEAN -> {
          // A node in a list says its index itself; the list is the node before it.
          if (node.isInIterable()) {
            name.append('[')
                .append(node.getIndex() != null ? node.getIndex() : node.getKey())
                .append(']');
          }
          if (node.getKind() == ElementKind.PROPERTY) {
            name.append(name.isEmpty() ? "" : ".").append(node.getName());
          }
        }
        default -> name.setLength(0); // the method and its parameter: the body is the root
      }
    }
    return name.isEmpty() ? "body" : name.toString();
  }

  private static String where(JsonProcessingException e) {
    return e.getLocation() == null
        ? ""
        : ", line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr();
  }

  private static String at(JsonMappingException e) {
    String path = jsonPath(e);
    int dot = path.lastIndexOf('.');
    return dot < 0 ? "" : " in '" + path.substring(0, dot) + "'";
  }

  /** Where in the body, spelt as fieldName spells it: items[1].payload.to. */
  private static String jsonPath(JsonMappingException e) {
    StringBuilder path = new StringBuilder();
    for (JsonMappingException.Reference ref : e.getPath()) {
      if (ref.getFieldName() != null) {
        path.append(path.isEmpty() ? "" : ".").append(ref.getFieldName());
      } else {
        path.append('[').append(ref.getIndex()).append(']');
      }
    }
    return path.toString();
  }

  /** A target type in JSON words, never a Java class name. */
  private static String describe(Class<?> type) {
    if (type == null) {
      return "this field";
    }
    if (type == Integer.class || type == int.class || type == Long.class || type == long.class) {
      return "a whole number";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "true or false";
    }
    if (type == String.class) {
      return "a string";
    }
    if (type.isRecord()) {
      return "a JSON object";
    }
    return "of another type";
  }
}
