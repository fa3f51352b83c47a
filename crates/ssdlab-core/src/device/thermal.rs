//! AnyDrive temperature and thermal throttling.
//!
//! The drive is one lump of heat capacity `C` joined to the surrounding air by a thermal
//! resistance `R` (which is what the cooling — airflow, heatsink, slot — provides):
//! `C dT/dt = P − (T − T_ambient) / R`. Power is an idle floor (controller, DRAM, link) plus,
//! for every die, its share of the active budget while it works, so a drive that keeps all
//! its dies busy draws the datasheet's active power.
//!
//! The controller reads its sensor once per sample period, as drives do. At `throttle_c` it
//! spaces flash operations out so the dies do only `throttle_level` of their full-speed work
//! (less work, less heat); below `resume_c` it runs at full speed again. NVMe drives report
//! these thresholds as their warning and critical composite temperatures.

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::engine::Time;
use crate::error::ConfigError;
use crate::report::ThermalReport;

fn one_second() -> Time {
    1_000_000_000
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThermalConfig {
    /// Power with no flash work, W.
    pub idle_w: f64,
    /// Power with every die working, W (the drive's sustained-write power).
    pub active_w: f64,
    /// Heat capacity of the drive, J/K.
    pub heat_capacity_j_per_k: f64,
    /// AnyDrive to ambient air, K/W.
    pub thermal_resistance_k_per_w: f64,
    pub ambient_c: f64,
    /// Temperature at the start of the run; `None`: settled at idle.
    #[serde(default)]
    pub start_c: Option<f64>,
    pub throttle_c: f64,
    pub resume_c: f64,
    /// Fraction of full-speed flash work done while throttled, in (0, 1].
    pub throttle_level: f64,
    /// How often the controller reads its temperature sensor.
    #[serde(default = "one_second")]
    pub sample_ns: Time,
}

impl ThermalConfig {
    // `!(x > 0.0)` refuses NaN as well as the values out of range.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    /// Errors name the core's keys (`thermal.idle_w`), as every device check does.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |key: &str, msg: &str| Err(ConfigError::new(&format!("thermal.{key}"), msg.to_string()));
        if !(self.idle_w >= 0.0) {
            return err("idle_w", "must be zero or more watts");
        }
        if !(self.active_w >= self.idle_w) {
            return err("active_w", "must be at least the idle power");
        }
        if !(self.heat_capacity_j_per_k > 0.0) {
            return err("heat_capacity_j_per_k", "must be positive (J/K)");
        }
        if !(self.thermal_resistance_k_per_w > 0.0) {
            return err("thermal_resistance_k_per_w", "must be positive (K/W)");
        }
        if !(self.resume_c < self.throttle_c) {
            return err("resume_c", "must be below the throttle temperature");
        }
        if !(self.throttle_level > 0.0 && self.throttle_level <= 1.0) {
            return err("throttle_level", "must be in (0, 1]");
        }
        if self.sample_ns == 0 {
            return err("sample_ns", "must be positive");
        }
        if !self.ambient_c.is_finite() || self.start_c.is_some_and(|t| !t.is_finite()) {
            return err("ambient_c", "must be a finite temperature");
        }
        Ok(())
    }

    /// Where the temperature settles under constant power `w`.
    pub fn steady_c(&self, w: f64) -> f64 {
        self.ambient_c + w * self.thermal_resistance_k_per_w
    }
}

/// Temperature state and throttle of one drive.
#[derive(Clone, Debug)]
pub struct Thermal {
    cfg: ThermalConfig,
    /// Active power of one working die, W.
    die_w: f64,
    temperature_c: f64,
    max_c: f64,
    last_sample: Time,
    /// Die work (ns, at full speed) charged since the last sample.
    work_ns: u128,
    throttled_since: Option<Time>,
    throttled_ns: Time,
    throttle_events: u64,
    sampling: bool,
}

impl Thermal {
    pub fn new(cfg: ThermalConfig, dies: u32) -> Thermal {
        let start = cfg.start_c.unwrap_or_else(|| cfg.steady_c(cfg.idle_w));
        Thermal {
            die_w: (cfg.active_w - cfg.idle_w) / dies.max(1) as f64,
            temperature_c: start,
            max_c: start,
            last_sample: 0,
            work_ns: 0,
            throttled_since: None,
            throttled_ns: 0,
            throttle_events: 0,
            sampling: false,
            cfg,
        }
    }

    /// Charge `ns` of die work; returns how long the die is occupied by it (longer while
    /// throttled: the gaps the controller leaves between operations).
    #[inline]
    pub fn occupy(&mut self, ns: Time) -> Time {
        self.work_ns += ns as u128;
        self.stretched(ns)
    }

    /// How long `ns` of die work takes at the current throttle.
    #[inline]
    pub fn stretched(&self, ns: Time) -> Time {
        if self.throttled_since.is_some() {
            (ns as f64 / self.cfg.throttle_level).ceil() as Time
        } else {
            ns
        }
    }

    /// On a request arriving at `now`: when the first sensor reading is due, if it has not
    /// been scheduled yet (readings then repeat through [`Thermal::sample`]).
    pub fn first_sample(&mut self, now: Time) -> Option<Time> {
        (!std::mem::replace(&mut self.sampling, true)).then_some(now + self.cfg.sample_ns)
    }

    /// A new run: the reading that was due went with the previous run's events.
    pub fn begin_run(&mut self) {
        self.sampling = false;
    }

    /// A sensor reading at `now`: integrate the heat since the last one (power constant over
    /// the step, so the exponential step is exact), then throttle or resume. Returns when the
    /// next reading is due.
    pub fn sample(&mut self, now: Time) -> Time {
        self.read_sensor(now);
        now + self.cfg.sample_ns
    }

    fn read_sensor(&mut self, now: Time) {
        let dt_ns = now.saturating_sub(self.last_sample);
        if dt_ns > 0 {
            let dt = dt_ns as f64 * 1e-9;
            let power = self.cfg.idle_w + self.die_w * (self.work_ns as f64 * 1e-9) / dt;
            let steady = self.cfg.steady_c(power);
            let tau = self.cfg.heat_capacity_j_per_k * self.cfg.thermal_resistance_k_per_w;
            self.temperature_c = steady + (self.temperature_c - steady) * (-dt / tau).exp();
            self.max_c = self.max_c.max(self.temperature_c);
            self.work_ns = 0;
            self.last_sample = now;
        }
        match self.throttled_since {
            None if self.temperature_c >= self.cfg.throttle_c => {
                self.throttled_since = Some(now);
                self.throttle_events += 1;
            }
            Some(since) if self.temperature_c <= self.cfg.resume_c => {
                self.throttled_ns += now - since;
                self.throttled_since = None;
            }
            _ => {}
        }
    }

    pub fn report(&self, at: Time) -> ThermalReport {
        ThermalReport {
            temperature_c: self.temperature_c,
            max_temperature_c: self.max_c,
            throttled: self.throttled_since.is_some(),
            throttled_ns: self.throttled_ns + self.throttled_since.map_or(0, |s| at.saturating_sub(s)),
            throttle_events: self.throttle_events,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ThermalConfig {
        ThermalConfig {
            idle_w: 1.0,
            active_w: 9.0,
            heat_capacity_j_per_k: 10.0,
            thermal_resistance_k_per_w: 5.0,
            ambient_c: 30.0,
            start_c: None,
            throttle_c: 70.0,
            resume_c: 65.0,
            throttle_level: 0.5,
            sample_ns: 1_000_000_000,
        }
    }

    #[test]
    fn starts_at_idle_steady_state_and_stays_there_idle() {
        let mut t = Thermal::new(cfg(), 4);
        assert_eq!(t.report(0).temperature_c, 35.0);
        for s in 1..=100 {
            t.sample(s * 1_000_000_000);
        }
        assert!((t.report(0).temperature_c - 35.0).abs() < 1e-9);
    }

    #[test]
    fn full_load_follows_the_rc_curve() {
        // 4 dies working all the time: 9 W, settling at 30 + 45 = 75 °C with tau = 50 s.
        let mut t = Thermal::new(ThermalConfig { throttle_c: 500.0, ..cfg() }, 4);
        for s in 1..=50u64 {
            for _ in 0..4 {
                t.occupy(1_000_000_000);
            }
            t.sample(s * 1_000_000_000);
        }
        let expect = 75.0 + (35.0 - 75.0) * (-1.0f64).exp();
        assert!((t.report(0).temperature_c - expect).abs() < 1e-6);
    }

    #[test]
    fn throttles_at_the_threshold_and_resumes_below_the_hysteresis() {
        let mut t = Thermal::new(cfg(), 4);
        let mut now = 0;
        let mut occupied = 0;
        while t.throttle_events == 0 {
            now += 1_000_000_000;
            for _ in 0..4 {
                occupied = t.occupy(1_000_000_000);
            }
            t.sample(now);
            assert!(now < 1_000 * 1_000_000_000, "never reached the throttle point");
        }
        assert_eq!(occupied, 1_000_000_000, "full speed until the sensor says otherwise");
        assert!(t.report(now).temperature_c >= 70.0);
        // Throttled: the same work occupies the die twice as long.
        assert_eq!(t.occupy(1_000_000), 2_000_000);
        // Idle: it cools, resumes below 65 °C, and the throttled time is accounted.
        let start = now;
        while t.report(now).throttled {
            now += 1_000_000_000;
            t.sample(now);
        }
        assert!(t.report(now).temperature_c <= 65.0);
        assert_eq!(t.report(now).throttled_ns, now - start);
        assert_eq!(t.occupy(1_000_000), 1_000_000);
    }

    #[test]
    fn bad_values_name_their_key() {
        let e = ThermalConfig { resume_c: 80.0, ..cfg() }.validate().unwrap_err();
        assert_eq!(e.key, "thermal.resume_c");
        let e = ThermalConfig { throttle_level: 0.0, ..cfg() }.validate().unwrap_err();
        assert_eq!(e.key, "thermal.throttle_level");
    }
}
