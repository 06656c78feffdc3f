package dev.claimq.client;

import static dev.claimq.Api.enqueued;
import static dev.claimq.Api.json;
import static dev.claimq.Api.uniqueQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.claimq.AsAdmin;
import dev.claimq.client.api.AgentsApi;
import dev.claimq.client.api.ItemsApi;
import dev.claimq.client.api.OperatorsApi;
import dev.claimq.client.api.WorkersApi;
import dev.claimq.client.model.BatchResults;
import dev.claimq.client.model.ClaimBatchRequest;
import dev.claimq.client.model.ClaimNextRequest;
import dev.claimq.client.model.ClaimRequest;
import dev.claimq.client.model.ClaimedItem;
import dev.claimq.client.model.ClaimedItems;
import dev.claimq.client.model.CompleteBatchRequest;
import dev.claimq.client.model.CompleteEntry;
import dev.claimq.client.model.CompleteRequest;
import dev.claimq.client.model.EnqueueBatchRequest;
import dev.claimq.client.model.EnqueueRequest;
import dev.claimq.client.model.FailRequest;
import dev.claimq.client.model.FinishedItem;
import dev.claimq.client.model.HeartbeatRequest;
import dev.claimq.client.model.Item;
import dev.claimq.client.model.ItemPage;
import dev.claimq.client.model.ItemState;
import dev.claimq.client.model.NextClaim;
import dev.claimq.client.model.Problem;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import java.net.URI;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A whole worker loop through the Java client that openapi-generator makes from the committed
 * document (library native, in the build), against the real service: if a generator needs a
 * workaround to talk to claimq, this fails. The only addition is the API key, which the native
 * library leaves to a request interceptor.
 */
@QuarkusTest
class GeneratedJavaClientTest extends AsAdmin {
  @TestHTTPResource("/")
  URI base;

  private AgentsApi agent;
  private WorkersApi worker;
  private OperatorsApi operator;
  private ApiClient workerClient;

  @BeforeEach
  void clients() {
    agent = new AgentsApi(client("dev-agent-key"));
    workerClient = client("dev-worker-key");
    worker = new WorkersApi(workerClient);
    operator = new OperatorsApi(client("dev-operator-key"));
  }

  @Test
  void an_agent_enqueues_replays_and_is_refused_a_reused_key() throws Exception {
    String queue = uniqueQueue("java-client");
    EnqueueRequest work = new EnqueueRequest().dedupeKey("welcome/42").payload(Map.of("to", "ada"));

    // The agent's trace context is a header the document names, so the client can send it.
    String traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    var created = agent.enqueueWithHttpInfo(queue, work, traceparent);
    var replayed = agent.enqueueWithHttpInfo(queue, work, null);
    ApiException reused =
        catchThrowableOfType(
            ApiException.class,
            () -> agent.enqueue(queue, work.payload(Map.of("to", "grace")), null));

    assertThat(created.getStatusCode()).isEqualTo(201);
    assertThat(header(created, "Location")).isEqualTo("/v1/items/" + created.getData().getId());
    assertThat(created.getData().getState()).isEqualTo(ItemState.PENDING);
    assertThat(created.getData().getClaimedBy()).isNull();
    assertThat(created.getData().getTraceparent()).isEqualTo(traceparent);
    assertThat(replayed.getStatusCode()).isEqualTo(200);
    assertThat(header(replayed, "Idempotent-Replayed")).isEqualTo("true");
    assertThat(replayed.getData().getId()).isEqualTo(created.getData().getId());
    assertThat(problem(reused).getStatus()).isEqualTo(422);
    assertThat(problem(reused).getType()).endsWith("/dedupe-key-reused");
  }

  @Test
  void a_worker_drains_a_queue_to_204_and_loses_a_claim_by_id_quietly() throws Exception {
    String queue = uniqueQueue("java-client");
    String first = enqueue(queue, "a");
    enqueue(queue, "b");
    enqueue(queue, "c");

    ClaimedItem claimed = worker.claimNext(queue, new ClaimNextRequest().worker("java-1"));
    ClaimedItems many =
        worker.claimNextBatch(queue, new ClaimBatchRequest().worker("java-1").max(10));
    var empty = worker.claimNextWithHttpInfo(queue, new ClaimNextRequest().worker("java-1"));
    var lost = worker.claimItemWithHttpInfo(first, new ClaimRequest().worker("java-2"));

    assertThat(claimed.getId()).isEqualTo(first);
    assertThat(claimed.getClaimToken()).isNotBlank();
    assertThat(claimed.getLeaseExpiresAt()).isNotNull();
    assertThat(many.getItems())
        .hasSize(2)
        .allSatisfy(i -> assertThat(i.getClaimToken()).isNotBlank());
    assertThat(empty.getStatusCode()).isEqualTo(204);
    assertThat(empty.getData()).isNull();
    assertThat(lost.getStatusCode()).isEqualTo(204);
  }

  @Test
  void a_worker_heartbeats_completes_fails_and_meets_a_stale_claim_as_a_typed_problem()
      throws Exception {
    String queue = uniqueQueue("java-client");
    String sent = enqueue(queue, "sent");
    String refused = enqueue(queue, "refused");

    ClaimedItem one = worker.claimItem(sent, new ClaimRequest().worker("java-1").leaseSeconds(30));
    Item extended =
        worker.heartbeat(
            sent, new HeartbeatRequest().claimToken(one.getClaimToken()).leaseSeconds(120));
    FinishedItem done =
        worker.complete(
            sent, new CompleteRequest().claimToken(one.getClaimToken()).externalRef("msg_1"));
    ClaimedItem two = worker.claimItem(refused, new ClaimRequest().worker("java-1"));
    FinishedItem failed =
        worker.fail(
            refused,
            new FailRequest()
                .claimToken(two.getClaimToken())
                .error("SMTP 550: no such mailbox")
                .retryable(false));
    ApiException stale =
        catchThrowableOfType(
            ApiException.class,
            () -> worker.complete(refused, new CompleteRequest().claimToken(one.getClaimToken())));

    assertThat(extended.getLeaseExpiresAt()).isAfter(one.getLeaseExpiresAt());
    assertThat(done.getState()).isEqualTo(ItemState.DONE);
    assertThat(done.getExternalRef()).isEqualTo("msg_1");
    assertThat(failed.getState()).isEqualTo(ItemState.FAILED);
    assertThat(failed.getLastError()).isEqualTo("SMTP 550: no such mailbox");
    assertThat(problem(stale).getStatus()).isEqualTo(409);
    assertThat(problem(stale).getType()).endsWith("/stale-claim");
  }

  @Test
  void batches_and_an_operators_recovery_work_through_the_client() throws Exception {
    String queue = uniqueQueue("java-client");
    BatchResults enqueued =
        agent.enqueueBatch(
            queue,
            new EnqueueBatchRequest()
                .items(
                    List.of(
                        new EnqueueRequest().dedupeKey("x").payload(1),
                        new EnqueueRequest().dedupeKey("y").payload(2))),
            null);
    ClaimedItems claimed = worker.claimNextBatch(queue, new ClaimBatchRequest().max(2));
    BatchResults completed =
        worker.completeBatch(
            new CompleteBatchRequest()
                .items(
                    List.of(
                        new CompleteEntry()
                            .id(claimed.getItems().get(0).getId())
                            .claimToken(claimed.getItems().get(0).getClaimToken()))));
    ClaimedItem last = claimed.getItems().get(1);
    worker.fail(
        last.getId(),
        new FailRequest().claimToken(last.getClaimToken()).error("bounced").retryable(false));
    ItemPage failedItems = operator.listItems(null, 10, queue, null, "failed", null, null);
    // A conditional retry: the ETag of the read it is decided on, as the generated client sends
    // it; the same retry again is refused, since the item changed.
    String read =
        header(
            new ItemsApi(client("dev-operator-key")).getItemWithHttpInfo(last.getId(), null, null),
            "ETag");
    Item retried = operator.retry(last.getId(), null, read);
    ApiException stale =
        catchThrowableOfType(ApiException.class, () -> operator.retry(last.getId(), null, read));

    assertThat(enqueued.getResults()).extracting("status").containsExactly(201, 201);
    assertThat(completed.getResults().get(0).getStatus()).isEqualTo(200);
    assertThat(completed.getResults().get(0).getItem().getState()).isEqualTo(ItemState.DONE);
    assertThat(failedItems.getItems()).extracting(Item::getId).containsExactly(last.getId());
    assertThat(failedItems.getNextCursor()).isNull();
    assertThat(retried.getState()).isEqualTo(ItemState.PENDING);
    assertThat(retried.getAttempts()).isZero();
    assertThat(read).matches("\"[0-9]+\"");
    assertThat(stale.getCode()).isEqualTo(412);
  }

  @Test
  void fields_left_out_take_the_queues_policy_not_a_default_the_client_filled_in()
      throws Exception {
    String queue = uniqueQueue("java-client");
    json()
        .body(Map.of("maxAttempts", 3, "leaseSeconds", 600))
        .put("/v1/queues/{queue}/policy", queue)
        .then()
        .statusCode(200);
    // Enqueued without maxAttempts, as another client would send it: the client's own enqueue
    // of the same work is that item's replay, not a different maxAttempts.
    String byHand = enqueued(queue, "by-hand", 1);
    var replayed =
        agent.enqueueWithHttpInfo(
            queue, new EnqueueRequest().dedupeKey("by-hand").payload(1), null);
    Item mine = agent.enqueue(queue, new EnqueueRequest().dedupeKey("mine").payload(2), null);
    enqueue(queue, "third");
    enqueue(queue, "fourth");

    ClaimedItem byId = worker.claimItem(byHand, new ClaimRequest());
    ClaimedItem next = worker.claimNext(queue, new ClaimNextRequest());
    ClaimedItems batch = worker.claimNextBatch(queue, new ClaimBatchRequest().max(1));
    FinishedItem withNext =
        worker.complete(
            next.getId(),
            new CompleteRequest().claimToken(next.getClaimToken()).next(new NextClaim()));

    assertThat(replayed.getStatusCode()).isEqualTo(200);
    assertThat(replayed.getData().getId()).isEqualTo(byHand);
    assertThat(mine.getMaxAttempts()).isEqualTo(3);
    // Each claim's lease is the policy's 600 s, not the 60 s a schema default would send.
    for (ClaimedItem claimed : List.of(byId, next, batch.getItems().get(0), withNext.getNext())) {
      assertThat(claimed.getLeaseExpiresAt())
          .isAfter(OffsetDateTime.now().plusSeconds(500))
          .isBefore(OffsetDateTime.now().plusSeconds(601));
    }
  }

  private static String header(ApiResponse<?> response, String name) {
    return response.getHeaders().entrySet().stream()
        .filter(header -> header.getKey().equalsIgnoreCase(name))
        .map(header -> header.getValue().get(0))
        .findFirst()
        .orElse(null);
  }

  private String enqueue(String queue, String key) throws ApiException {
    return agent.enqueue(queue, new EnqueueRequest().dedupeKey(key).payload(key), null).getId();
  }

  private Problem problem(ApiException e) throws Exception {
    assertThat(e.getResponseHeaders().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
    return workerClient.getObjectMapper().readValue(e.getResponseBody(), Problem.class);
  }

  private ApiClient client(String key) {
    ApiClient client = new ApiClient();
    client.updateBaseUri(base.toString().replaceAll("/$", ""));
    client.setRequestInterceptor(request -> request.header("Authorization", "Bearer " + key));
    return client;
  }
}
