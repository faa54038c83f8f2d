package org.vrdma.cc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.vrdma.cc.algorithms.StaticRate;

class CongestionControlsTest {
    private static final FlowContext FLOW = FlowContext.of(100_000_000_000L, 8_000, 4096, 1);

    @Test
    void findsReferenceAlgorithmsByName() {
        assertThat(CongestionControls.defaults().names()).contains("static");
    }

    @Test
    void createsWithDefaultsForNullOrBlankConfig() {
        assertThat(CongestionControls.create("static", (String) null, FLOW).rateBps())
                .isEqualTo(FLOW.lineRateBps());
        assertThat(CongestionControls.create("static", " ", FLOW).windowBytes())
                .isEqualTo(CongestionControl.UNLIMITED_WINDOW);
    }

    @Test
    void bindsJsonStringAndTree() throws Exception {
        final CongestionControl fromString =
                CongestionControls.create("static", "{\"rateBps\": 1000000000, \"windowBytes\": 65536}", FLOW);
        assertThat(fromString.rateBps()).isEqualTo(1_000_000_000L);
        assertThat(fromString.windowBytes()).isEqualTo(65_536L);

        final CongestionControl fromTree =
                CongestionControls.create("static", new ObjectMapper().readTree("{\"rateBps\": 2000000000}"), FLOW);
        assertThat(fromTree.rateBps()).isEqualTo(2_000_000_000L);
    }

    @Test
    void rejectsUnknownAlgorithm() {
        assertThatThrownBy(() -> CongestionControls.create("cubic", "{}", FLOW))
                .isInstanceOf(CcConfigException.class)
                .hasMessageContaining("cubic: unknown congestion control")
                .hasMessageContaining("static");
    }

    @Test
    void rejectsUnknownFieldNamingIt() {
        assertThatThrownBy(() -> CongestionControls.create("static", "{\"rate\": 5}", FLOW))
                .isInstanceOfSatisfying(
                        CcConfigException.class, e -> assertThat(e.fieldPath()).isEqualTo("static.rate"))
                .hasMessageStartingWith("static.rate: unknown field");
    }

    @Test
    void rejectsWrongTypeNamingTheField() {
        assertThatThrownBy(() -> CongestionControls.create("static", "{\"rateBps\": \"fast\"}", FLOW))
                .isInstanceOfSatisfying(
                        CcConfigException.class, e -> assertThat(e.fieldPath()).isEqualTo("static.rateBps"))
                .hasMessageContaining("expected an integer");
        assertThatThrownBy(() -> CongestionControls.create("static", "{\"rateBps\": 1.5}", FLOW))
                .isInstanceOfSatisfying(
                        CcConfigException.class, e -> assertThat(e.fieldPath()).isEqualTo("static.rateBps"));
    }

    @Test
    void rejectsInvalidValueNamingTheField() {
        assertThatThrownBy(() -> CongestionControls.create("static", "{\"windowBytes\": -1}", FLOW))
                .isInstanceOfSatisfying(
                        CcConfigException.class, e -> assertThat(e.fieldPath()).isEqualTo("static.windowBytes"))
                .hasMessage("static.windowBytes: must not be negative, was -1");
    }

    @Test
    void rejectsMalformedJsonAndNonObjects() {
        assertThatThrownBy(() -> CongestionControls.create("static", "{\"rateBps\": ", FLOW))
                .isInstanceOf(CcConfigException.class)
                .hasMessageStartingWith("static: malformed JSON");
        assertThatThrownBy(() -> CongestionControls.create("static", "[1]", FLOW))
                .isInstanceOf(CcConfigException.class)
                .hasMessageStartingWith("static: must be a JSON object");
    }

    @Test
    void configuredAlgorithmCreatesIndependentFlows() {
        final ConfiguredAlgorithm algorithm = CongestionControls.defaults().configure("static", "{\"rateBps\": 1000}");
        assertThat(algorithm.name()).isEqualTo("static");
        assertThat(algorithm.config()).isInstanceOf(StaticRate.Config.class);
        assertThat(algorithm.create(FLOW)).isNotSameAs(algorithm.create(FLOW));
    }

    @Test
    void exposesDefaultConfigAsJson() {
        assertThat(CongestionControls.defaults()
                        .defaultConfig("static")
                        .get("rateBps")
                        .asLong())
                .isZero();
    }
}
