package dev.claimq.mcp;

import io.agroal.api.AgroalDataSource;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator.ValidationResponse;
import java.net.URI;
import java.net.http.HttpRequest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;

/** What the MCP tests share: an agent's client through the official SDK, and a row count. */
public final class McpClients {
  private McpClients() {}

  /** An initialized client of the service at root, sending the key (none when null). */
  public static McpSyncClient client(URI root, String key) {
    HttpRequest.Builder request = HttpRequest.newBuilder();
    if (key != null) {
      request.header("Authorization", "Bearer " + key);
    }
    McpSyncClient client =
        McpClient.sync(
                HttpClientStreamableHttpTransport.builder(root.toString())
                    .endpoint("/mcp")
                    .requestBuilder(request)
                    .build())
            .requestTimeout(Duration.ofSeconds(20))
            // The SDK's own validator of structured content needs json-schema-validator 3, where
            // the project's tests have 1.5; the tools declare no output schema to check anyway.
            .jsonSchemaValidator((schema, value) -> ValidationResponse.asValid(null))
            .build();
    client.initialize();
    return client;
  }

  /** The queue's items in the table, whatever their state. */
  public static long rows(AgroalDataSource database, String queue) throws Exception {
    try (Connection connection = database.getConnection();
        PreparedStatement count =
            connection.prepareStatement("SELECT count(*) FROM item WHERE queue = ?")) {
      count.setString(1, queue);
      try (ResultSet rows = count.executeQuery()) {
        rows.next();
        return rows.getLong(1);
      }
    }
  }
}
