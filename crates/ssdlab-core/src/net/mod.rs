//! The network a server's clients reach it over, as flows (issue 30's network layer): ports and
//! what TCP gets of their line rate ([`link`]), bonded ports as Linux's bonding driver drives
//! them ([`bond`]), the max-min fair sharing of resources by flows ([`maxmin`]) and a fluid
//! simulation of transfers over them ([`flow`]), and a server's NIC, clients and sending
//! costs at run time ([`server`]). It sits at the bottom of the stack (time and
//! errors only); hosts, clients and the event loop use it from above. `docs/network.md` is the
//! model with its sources.

pub mod bond;
pub mod flow;
pub mod link;
pub mod maxmin;
pub mod server;

pub use bond::{AttachedBond, BondConfig, BondMode, FlowKey, HashFormula, HashPolicy, Placement};
pub use flow::{window_cap, FlowId, FlowNet, ResourceId, ResourceUsage};
pub use link::LinkConfig;
pub use maxmin::max_min_rates;
pub use server::{ClientClass, ClientClassReport, ClientRef, NetCosts, NetCounters, NetResource, NetworkReport, NetworkSpec, SendWait, ServerNet};
