package dev.claimq.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ApiKeysTest {
  private static final String HASH = MintKey.sha256("s3cret-key");

  @Test
  void a_presented_key_finds_the_entry_of_its_hash() {
    ApiKeys keys = new ApiKeys(true, List.of("mailer:worker+agent:emails+sms:" + HASH));

    ApiKey key = keys.find("s3cret-key").orElseThrow();
    assertThat(key.name()).isEqualTo("mailer");
    assertThat(key.roles()).containsExactlyInAnyOrder("worker", "agent");
    assertThat(key.mayUse("emails")).isTrue();
    assertThat(key.mayUse("payments")).isFalse();
    assertThat(keys.find("s3cret-key ")).isEmpty();
    assertThat(keys.find("")).isEmpty();
  }

  @Test
  void a_star_lets_a_key_use_every_queue() {
    ApiKey key = ApiKey.parse("ops:operator:*:" + HASH.toUpperCase());
    assertThat(key.mayUse("anything")).isTrue();
    assertThat(key.sha256()).isEqualTo(HASH);
  }

  @Test
  void a_malformed_entry_is_refused_naming_the_entry_but_not_its_secret() {
    for (String entry :
        List.of(
            "mailer:worker:*",
            "Mailer:worker:*:" + HASH,
            "mailer:admin:*:" + HASH,
            "mailer:worker:Emails:" + HASH,
            "mailer:worker:*:not-a-hash",
            "mailer:worker:*:" + HASH + ":extra")) {
      assertThatThrownBy(() -> ApiKey.parse(entry))
          .as(entry)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("claimq.auth.keys entry")
          .hasMessageNotContaining(HASH);
    }
  }

  @Test
  void the_service_refuses_to_start_with_authentication_on_and_no_keys() {
    assertThatThrownBy(() -> new ApiKeys(true, List.of()).requireUsable())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("CLAIMQ_AUTH_KEYS");
    new ApiKeys(false, List.of()).requireUsable(); // switched off on purpose: starts, loudly
    new ApiKeys(true, List.of("a:agent:*:" + HASH)).requireUsable();
  }

  @Test
  void the_readmes_development_keys_are_found_by_their_hash_whatever_their_name() {
    ApiKeys keys =
        new ApiKeys(
            true,
            List.of(
                "mailer:worker:*:" + HASH,
                "ops:operator:*:" + MintKey.sha256("dev-operator-key"),
                "admin:agent+worker+operator:*:" + MintKey.sha256("dev-admin-key")));
    assertThat(keys.published()).containsExactly("admin", "ops");
    assertThat(new ApiKeys(true, List.of("mailer:worker:*:" + HASH)).published()).isEmpty();
  }

  @Test
  void two_entries_with_one_hash_are_refused() {
    assertThatThrownBy(() -> new ApiKeys(true, List.of("a:agent:*:" + HASH, "b:worker:*:" + HASH)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void minted_keys_are_long_random_and_prefixed() {
    String first = MintKey.newKey();
    assertThat(first).startsWith("cq_").hasSize(46);
    assertThat(MintKey.newKey()).isNotEqualTo(first);
    assertThat(MintKey.sha256("abc"))
        .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }
}
