package dev.claimq.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** An RFC 9457 problem detail: the body of every error response. */
@Schema(
    name = "Problem",
    description = "RFC 9457 problem details.",
    requiredProperties = {"type", "title", "status", "detail"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(
    @Schema(
            description = "Identifies the kind of problem.",
            examples = "https://claimq.dev/problems/stale-claim")
        String type,
    @Schema(examples = "Stale claim") String title,
    @Schema(examples = "409") int status,
    @Schema(description = "What went wrong with this request, and what to do about it.")
        String detail,
    @Schema(description = "Each invalid field of a 400, when the request had any.")
        List<FieldError> errors) {

  public static final String MEDIA_TYPE = "application/problem+json";
  static final String TYPE_BASE = "https://claimq.dev/problems/";

  /** A problem of the type named by slug under TYPE_BASE, or "about:blank" as it is. */
  static Problem of(int status, String slug, String title, String detail, List<FieldError> errors) {
    String type = "about:blank".equals(slug) ? slug : TYPE_BASE + slug;
    return new Problem(type, title, status, detail, errors);
  }

  @Schema(
      name = "FieldError",
      requiredProperties = {"field", "message"})
  public record FieldError(
      @Schema(
              description =
                  "Where in the request: a parameter, a header, or a path in the body, such as"
                      + " next.waitSeconds or, for an entry of a batch, items[1].priority.",
              examples = "dedupeKey")
          String field,
      @Schema(examples = "size must be between 1 and 200") String message) {}
}
