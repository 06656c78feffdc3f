package dev.claimq.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each shape MCP gives a method's params, one wrong value at a time: every check is named by the
 * refusal only it gives, so a check that went missing fails here. What the schema allows passes.
 */
class McpParamsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String CLIENT =
      "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          + "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"";

  private static final String NOT_A_CURSOR =
      "'params.cursor' is not a cursor this server gave: send an earlier answer's nextCursor as it"
          + " was, or no cursor for the first page.";

  /** Method, params (null: none), and the refusal; one check each. */
  private static final String[][] REFUSED = {
    {"ping", "{\"_meta\":\"x\"}", "'params._meta' must be an object."},
    {"notifications/initialized", "{\"_meta\":null}", "'params._meta' must be an object."},
    {
      "tools/list",
      "{\"_meta\":{\"progressToken\":true}}",
      "'params._meta.progressToken' must be a string or a number."
    },
    {"initialize", null, "'params' is missing: initialize needs it, as an object."},
    {
      "initialize",
      "{\"capabilities\":{},\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
      "'params.protocolVersion' is missing: initialize needs it, as a string."
    },
    {
      "initialize",
      "{\"protocolVersion\":\"x\",\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
      "'params.capabilities' is missing: initialize needs it, as an object."
    },
    {
      "initialize",
      "{\"protocolVersion\":\"x\",\"capabilities\":{\"experimental\":{\"a\":1}},"
          + "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
      "'params.capabilities.experimental.a' must be an object."
    },
    {
      "initialize",
      "{\"protocolVersion\":\"x\",\"capabilities\":{\"roots\":{\"listChanged\":\"yes\"}},"
          + "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
      "'params.capabilities.roots.listChanged' must be true or false."
    },
    {
      "initialize",
      "{\"protocolVersion\":\"x\",\"capabilities\":{\"sampling\":true},"
          + "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
      "'params.capabilities.sampling' must be an object."
    },
    {
      "initialize",
      "{\"protocolVersion\":\"x\",\"capabilities\":{\"elicitation\":[]},"
          + "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\"}}",
      "'params.capabilities.elicitation' must be an object."
    },
    {
      "initialize",
      "{\"protocolVersion\":\"x\",\"capabilities\":{},\"clientInfo\":{\"version\":\"1\"}}",
      "'params.clientInfo.name' is missing: initialize needs it, as a string."
    },
    {"initialize", "{" + CLIENT + ",\"title\":1}}", "'params.clientInfo.title' must be a string."},
    {
      "initialize",
      "{" + CLIENT + ",\"description\":{}}}",
      "'params.clientInfo.description' must be a string."
    },
    {
      "initialize",
      "{" + CLIENT + ",\"websiteUrl\":[]}}",
      "'params.clientInfo.websiteUrl' must be a string."
    },
    {"initialize", "{" + CLIENT + ",\"icons\":{}}}", "'params.clientInfo.icons' must be an array."},
    {
      "initialize",
      "{" + CLIENT + ",\"icons\":[\"i.png\"]}}",
      "'params.clientInfo.icons[0]' must be an object."
    },
    {
      "initialize",
      "{" + CLIENT + ",\"icons\":[{}]}}",
      "'params.clientInfo.icons[0].src' is missing: initialize needs it, as a string."
    },
    {
      "initialize",
      "{" + CLIENT + ",\"icons\":[{\"src\":\"i\",\"mimeType\":5}]}}",
      "'params.clientInfo.icons[0].mimeType' must be a string."
    },
    {
      "initialize",
      "{" + CLIENT + ",\"icons\":[{\"src\":\"i\",\"sizes\":\"48x48\"}]}}",
      "'params.clientInfo.icons[0].sizes' must be an array."
    },
    {
      "initialize",
      "{" + CLIENT + ",\"icons\":[{\"src\":\"i\",\"theme\":\"Dark\"}]}}",
      "'params.clientInfo.icons[0].theme' must be one of light, dark."
    },
    {"resources/list", "{\"cursor\":null}", "'params.cursor' must be a string."},
    {"prompts/list", "{\"cursor\":[]}", "'params.cursor' must be a string."},
    {"resources/templates/list", "{\"cursor\":1}", "'params.cursor' must be a string."},
    // A cursor is the server's own: the extension reads one as Base64 of two instants.
    {"tools/list", "{\"cursor\":\"abc\"}", NOT_A_CURSOR},
    {"prompts/list", "{\"cursor\":\"\"}", NOT_A_CURSOR},
    {"resources/list", "{\"cursor\":\"AAAAAAAAAAEAAAAA\"}", NOT_A_CURSOR}, // one instant
    {
      "tools/list", "{\"cursor\":\"f/////////8AAAAAAAAAAAAAAAAAAAAA\"}", NOT_A_CURSOR
    }, // past 1e9 years
    {"resources/templates/list", "{\"cursor\":\"AAAAAGlVuQAAAAAAAAAAAGlVuQAAAAA*\"}", NOT_A_CURSOR},
    {"tools/call", null, "'params.name' must name a tool, as a string."},
    {
      "tools/call",
      "{\"name\":\"t\",\"arguments\":[]}",
      "'params.arguments' must be an object of the tool's arguments, by name."
    },
    {"prompts/get", "{}", "'params.name' is missing: prompts/get needs it, as a string."},
    {
      "prompts/get",
      "{\"name\":\"p\",\"arguments\":\"a=1\"}",
      "'params.arguments' must be an object."
    },
    {"resources/read", "{\"uri\":5}", "'params.uri' must be a string."},
    {
      "resources/unsubscribe",
      null,
      "'params' is missing: resources/unsubscribe needs it, as an" + " object."
    },
    {
      "logging/setLevel",
      "{\"level\":\"DEBUG\"}",
      "'params.level' must be one of debug, info, notice, warning, error, critical, alert,"
          + " emergency."
    },
    {
      "completion/complete",
      "{\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
      "'params.ref' is missing: completion/complete needs it, as an object."
    },
    {
      "completion/complete",
      "{\"ref\":{\"name\":\"p\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
      "'params.ref.type' is missing: completion/complete needs it, as one of ref/prompt,"
          + " ref/resource."
    },
    {
      "completion/complete",
      "{\"ref\":{\"type\":\"ref/prompt\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
      "'params.ref.name' is missing: completion/complete needs it, as a string."
    },
    {
      "completion/complete",
      "{\"ref\":{\"type\":\"ref/resource\",\"name\":\"r\"},"
          + "\"argument\":{\"name\":\"a\",\"value\":\"\"}}",
      "'params.ref.uri' is missing: completion/complete needs it, as a string."
    },
    {
      "completion/complete",
      "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"}}",
      "'params.argument' is missing: completion/complete needs it, as an object."
    },
    {
      "completion/complete",
      "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"value\":\"\"}}",
      "'params.argument.name' is missing: completion/complete needs it, as a string."
    },
    {
      "completion/complete",
      "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"a\",\"value\":\"\"},"
          + "\"context\":7}",
      "'params.context' must be an object."
    },
    {
      "completion/complete",
      "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"},\"argument\":{\"name\":\"a\",\"value\":\"\"},"
          + "\"context\":{\"arguments\":{\"b\":null}}}",
      "'params.context.arguments.b' must be a string."
    },
    {
      "notifications/cancelled",
      "{\"reason\":\"x\"}",
      "'params.requestId' is missing: notifications/cancelled needs it, as a string or a whole"
          + " number."
    },
    {
      "notifications/cancelled",
      "{\"requestId\":1.5}",
      "'params.requestId' must be a string or a whole number."
    },
    {
      "notifications/cancelled",
      "{\"requestId\":1,\"reason\":2}",
      "'params.reason' must be a string."
    },
    {
      "notifications/progress",
      "{\"progress\":1}",
      "'params.progressToken' is missing: notifications/progress needs it, as a string or a"
          + " number."
    },
    {
      "notifications/progress",
      "{\"progressToken\":\"t\",\"progress\":\"half\"}",
      "'params.progress' must be a number."
    },
    {
      "notifications/progress",
      "{\"progressToken\":\"t\",\"progress\":1,\"total\":\"2\"}",
      "'params.total' must be a number."
    },
    {
      "notifications/progress",
      "{\"progressToken\":\"t\",\"progress\":1,\"message\":false}",
      "'params.message' must be a string."
    },
    {"no/such/method", "{\"_meta\":1}", "'params._meta' must be an object."},
  };

  /** What the schema allows, with fields it does not name beside. */
  private static final String[][] ALLOWED = {
    {"ping", null},
    {"ping", "{\"_meta\":{\"progressToken\":1.5,\"x\":null},\"extra\":1}"},
    {
      "initialize",
      "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"roots\":{\"listChanged\":true},"
          + "\"sampling\":{},\"elicitation\":{},\"experimental\":{\"x\":{}},\"other\":true},"
          + "\"clientInfo\":{\"name\":\"c\",\"version\":\"1\",\"title\":\"C\",\"icons\":"
          + "[{\"src\":\"i\",\"sizes\":[\"48x48\"],\"theme\":\"light\"}],\"other\":1}}"
    },
    {"tools/list", "{\"cursor\":\"AAAAAGlVuQAAAAAAAAAAAGlVuQAAAAAF\"}"},
    {"tools/call", "{\"name\":\"t\"}"},
    {"tools/call", "{\"name\":\"t\",\"arguments\":null}"},
    {"prompts/get", "{\"name\":\"p\",\"arguments\":{\"a\":\"1\"}}"},
    {"resources/read", "{\"uri\":\"file:///x\"}"},
    {"logging/setLevel", "{\"level\":\"emergency\"}"},
    {
      "completion/complete",
      "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"file:///{x}\"},"
          + "\"argument\":{\"name\":\"x\",\"value\":\"a\"},\"context\":{\"arguments\":{\"y\":\"b\"}}}"
    },
    {"notifications/cancelled", "{\"requestId\":\"r\",\"reason\":\"late\"}"},
    {"notifications/progress", "{\"progressToken\":1,\"progress\":0.5,\"total\":1}"},
    {"notifications/initialized", null},
    {"no/such/method", "{\"anything\":[1]}"},
  };

  @Test
  void each_misshapen_field_is_refused_by_name() throws Exception {
    List<String> wrong = new ArrayList<>();
    for (String[] each : REFUSED) {
      String why = McpParams.whyNot(each[0], params(each[1]));
      if (!each[2].equals(why)) {
        wrong.add(each[0] + " " + each[1] + ": " + why);
      }
    }
    assertThat(wrong).isEmpty();
  }

  @Test
  void what_the_schema_allows_passes() throws Exception {
    List<String> wrong = new ArrayList<>();
    for (String[] each : ALLOWED) {
      String why = McpParams.whyNot(each[0], params(each[1]));
      if (why != null) {
        wrong.add(each[0] + " " + each[1] + ": " + why);
      }
    }
    assertThat(wrong).isEmpty();
  }

  private static JsonNode params(String json) throws Exception {
    return json == null ? null : JSON.readTree(json);
  }
}
