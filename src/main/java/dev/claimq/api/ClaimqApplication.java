package dev.claimq.api;

import jakarta.ws.rs.core.Application;
import org.eclipse.microprofile.openapi.annotations.Components;
import org.eclipse.microprofile.openapi.annotations.OpenAPIDefinition;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.headers.Header;
import org.eclipse.microprofile.openapi.annotations.info.Info;
import org.eclipse.microprofile.openapi.annotations.info.License;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.ExampleObject;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The OpenAPI document's front page, and the problem responses that operations refer to by name
 * (e.g. {@code @APIResponse(responseCode = "404", ref = "ItemNotFound")}).
 */
@OpenAPIDefinition(
    info =
        @Info(
            title = "claimq",
            version = "1",
            description =
                "A work queue on PostgreSQL where every item is claimed by exactly one worker."
                    + " Agents enqueue work once per dedupe key; workers claim, complete or fail"
                    + " it; operators browse, retry and cancel.",
            license = @License(name = "Apache-2.0")),
    tags = {
      @Tag(name = "agents", description = "Put work in a queue."),
      @Tag(name = "workers", description = "Claim work, then complete or fail it."),
      @Tag(name = "operators", description = "Browse, retry and cancel items; watch queues.")
    },
    components =
        @Components(
            securitySchemes =
                @SecurityScheme(
                    securitySchemeName = "bearer",
                    type = SecuritySchemeType.HTTP,
                    scheme = "bearer",
                    description =
                        "An API key: Authorization: Bearer <key>. In dev mode and tests,"
                            + " dev-agent-key, dev-worker-key, dev-operator-key and dev-admin-key"
                            + " (all roles)."),
            responses = {
              @APIResponse(
                  name = "Unauthorized",
                  responseCode = "401",
                  description = "No API key, or one this service does not know.",
                  headers =
                      @Header(name = "WWW-Authenticate", description = "Bearer realm=\"claimq\""),
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(name = "no key", value = ApiExamples.UNAUTHORIZED))),
              @APIResponse(
                  name = "Forbidden",
                  responseCode = "403",
                  description = "The key lacks the role, or may not use this queue.",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(name = "wrong role", value = ApiExamples.FORBIDDEN))),
              @APIResponse(
                  name = "InvalidRequest",
                  responseCode = "400",
                  description = "The request is invalid: see detail and errors.",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(name = "invalid", value = ApiExamples.INVALID))),
              @APIResponse(
                  name = "ItemNotFound",
                  responseCode = "404",
                  description = "No such item.",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(name = "not found", value = ApiExamples.NOT_FOUND))),
              @APIResponse(
                  name = "StaleClaim",
                  responseCode = "409",
                  description =
                      "The token is not the item's current claim (its lease expired and it was released or claimed again). Stop: do not repeat the side effect.",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(
                                  name = "stale claim",
                                  value = ApiExamples.STALE_CLAIM))),
              @APIResponse(
                  name = "StateConflict",
                  responseCode = "409",
                  description = "The item's state does not allow this.",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(
                                  name = "conflict",
                                  value = ApiExamples.STATE_CONFLICT))),
              @APIResponse(
                  name = "DedupeConflict",
                  responseCode = "422",
                  description = "The dedupe key already names an item with a different payload.",
                  content =
                      @Content(
                          mediaType = Problem.MEDIA_TYPE,
                          schema = @Schema(implementation = Problem.class),
                          examples =
                              @ExampleObject(
                                  name = "key reused",
                                  value = ApiExamples.DEDUPE_CONFLICT)))
            }))
public class ClaimqApplication extends Application {}
