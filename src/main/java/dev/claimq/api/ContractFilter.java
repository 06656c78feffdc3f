package dev.claimq.api;

import io.quarkus.smallrye.openapi.OpenApiFilter;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

/**
 * Finishes the OpenAPI document at build time. Every /v1 operation can answer 401, 403, 406, 412
 * (an If-Match), 500 and 503 the same way, every one that takes a body 413 and 415, and every read
 * 304 (an If-None-Match: *), so they are added here once rather than on each operation. Responses
 * are then listed success first: client generators take the Accept header from the first one, and a
 * client that asked only for problem+json would be refused with a 406.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class ContractFilter implements OASFilter {
  private static final Map<String, String> SHARED =
      Map.of(
          "401", "Unauthorized",
          "403", "Forbidden",
          "406", "NotAcceptable",
          "500", "ServerError",
          "503", "Unavailable");

  @Override
  public void filterOpenAPI(OpenAPI openAPI) {
    openAPI.getComponents().getSchemas().values().forEach(ContractFilter::asTheServiceReads);
    for (Map.Entry<String, PathItem> path : openAPI.getPaths().getPathItems().entrySet()) {
      if (!path.getKey().startsWith("/v1/")) {
        continue;
      }
      for (var operation : path.getValue().getOperations().values()) {
        APIResponses responses = operation.getResponses();
        // In place of the bare 401 and 403 that the extension derives from @RolesAllowed.
        SHARED.forEach(
            (status, name) ->
                responses.addAPIResponse(status, OASFactory.createAPIResponse().ref(name)));
        // What the HTTP layer refuses before any operation (HttpFraming): any status not listed.
        responses.setDefaultValue(OASFactory.createAPIResponse().ref("OtherRefusal"));
        // Only the policy's calls evaluate If-Match against an ETag; any other answers 412 to
        // an If-Match with tags (AmbiguousRequests).
        if (!responses.hasAPIResponse("412")) {
          responses.addAPIResponse("412", OASFactory.createAPIResponse().ref("PreconditionFailed"));
        }
        // An If-None-Match: * is a 304 on any read (NotModified); tags, on the reads with an ETag.
        if (operation == path.getValue().getGET() && !responses.hasAPIResponse("304")) {
          responses.addAPIResponse("304", OASFactory.createAPIResponse().ref("NotModified"));
        }
        if (operation.getRequestBody() != null) {
          operation.getRequestBody().getContent().getMediaTypes().values().stream()
              .map(media -> media.getSchema())
              .forEach(schema -> refuseUnknownFields(openAPI, schema));
          // Any body may pass the byte limit; the enqueue calls say more about their payloads.
          if (!responses.hasAPIResponse("413")) {
            responses.addAPIResponse("413", OASFactory.createAPIResponse().ref("TooLarge"));
          }
          responses.addAPIResponse(
              "415", OASFactory.createAPIResponse().ref("UnsupportedMediaType"));
        }
        // The extension gives a referenced success response a description of its own ("OK"),
        // which would hide the shared response's: a reference says it all.
        responses.getAPIResponses().values().stream()
            .filter(response -> response.getRef() != null)
            .forEach(response -> response.setDescription(null));
        Map<String, APIResponse> ordered = new LinkedHashMap<>();
        responses.getAPIResponses().entrySet().stream()
            .sorted(Map.Entry.comparingByKey(Comparator.comparing(ContractFilter::rank)))
            .forEach(entry -> ordered.put(entry.getKey(), entry.getValue()));
        responses.setAPIResponses(ordered);
      }
    }
  }

  /**
   * A request body's objects, and the objects in them, say what the service does with a field it
   * does not know: refuse it (400, "Unknown field"). Only requests: an answer may gain fields.
   */
  private static void refuseUnknownFields(OpenAPI openAPI, Schema schema) {
    if (schema == null) {
      return;
    }
    if (schema.getRef() != null) {
      String name = schema.getRef().substring(schema.getRef().lastIndexOf('/') + 1);
      refuseUnknownFields(openAPI, openAPI.getComponents().getSchemas().get(name));
      return;
    }
    if (schema.getProperties() != null && schema.getAdditionalPropertiesBoolean() == null) {
      schema.setAdditionalPropertiesBoolean(false);
      schema.getProperties().values().forEach(property -> refuseUnknownFields(openAPI, property));
    }
    refuseUnknownFields(openAPI, schema.getItems());
    if (schema.getAnyOf() != null) {
      schema.getAnyOf().forEach(choice -> refuseUnknownFields(openAPI, choice));
    }
  }

  /** A schema, its properties and its items, as the service reads what they describe. */
  private static void asTheServiceReads(Schema schema) {
    if (schema == null) {
      return;
    }
    admitNull(schema);
    // The extension's pattern for @NotBlank, in ECMAScript's sense of white space.
    if ("\\S".equals(schema.getPattern())) {
      schema.setPattern(Requests.NOT_BLANK);
    }
    // A @Pattern is matched whole, a schema's pattern anywhere ("no|unknown" takes "nope"): where
    // an enumeration lists the values, the copied pattern says nothing more, and less exactly.
    if (schema.getEnumeration() != null) {
      schema.setPattern(null);
    }
    if (schema.getProperties() != null) {
      schema.getProperties().values().forEach(ContractFilter::asTheServiceReads);
    }
    asTheServiceReads(schema.getItems());
  }

  /**
   * A nullable value takes null by every keyword that constrains it. With an enumeration, null is
   * among its values: in JSON Schema 2020-12 the enumeration applies to null too, so {@code type:
   * [string, "null"]} alone still refuses it. A nullable reference ({@code anyOf: [$ref, null]})
   * has null in its type too: the extension sometimes leaves it {@code type: object}, which refuses
   * the null the anyOf takes.
   */
  private static void admitNull(Schema schema) {
    if (schema.getAnyOf() != null
        && schema.getType() != null
        && !schema.getType().contains(Schema.SchemaType.NULL)
        && schema.getAnyOf().stream()
            .anyMatch(
                member ->
                    member.getType() != null
                        && member.getType().equals(java.util.List.of(Schema.SchemaType.NULL)))) {
      schema.addType(Schema.SchemaType.NULL);
    }
    if (schema.getEnumeration() != null
        && schema.getType() != null
        && schema.getType().contains(Schema.SchemaType.NULL)
        && !schema.getEnumeration().contains(null)) {
      // addEnumeration skips a null; a new list keeps it.
      java.util.List<Object> values = new java.util.ArrayList<>(schema.getEnumeration());
      values.add(null);
      schema.setEnumeration(values);
    }
  }

  /** 2xx first, then the rest by status. */
  private static String rank(String status) {
    return (status.startsWith("2") ? "0" : "1") + status;
  }
}
