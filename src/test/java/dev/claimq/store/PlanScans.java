package dev.claimq.store;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** The nodes of an EXPLAIN (FORMAT JSON) plan that read one table. */
public final class PlanScans {
  private PlanScans() {}

  public static List<JsonNode> of(JsonNode plan, String table) {
    List<JsonNode> scans = new ArrayList<>();
    collect(plan, table, scans);
    return scans;
  }

  private static void collect(JsonNode node, String table, List<JsonNode> scans) {
    if (node.isArray()) {
      node.forEach(child -> collect(child, table, scans));
      return;
    }
    if (node.has("Plan")) {
      collect(node.get("Plan"), table, scans);
      return;
    }
    if (table.equals(node.path("Relation Name").asText())) {
      scans.add(node);
    }
    node.path("Plans").forEach(child -> collect(child, table, scans));
  }
}
