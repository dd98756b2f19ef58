//! The plan made real: a Landlock ruleset built in the parent (opening each granted path), and
//! the few system calls the child makes between fork and exec to bind itself to it. Only
//! what the running kernel can enforce is asked for, and [`Enforcement`] reports exactly that.

use std::io;

use crate::plan::Plan;
use crate::settings::Network;

/// What the kernel enforces for one launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enforcement {
    /// The kernel's Landlock ABI (0: none).
    pub abi: u32,
    /// Files outside the grants cannot be read, written or executed.
    pub filesystem: bool,
    pub network: NetworkEnforcement,
    /// Signals to, and abstract UNIX sockets of, processes outside the sandbox are refused.
    pub scoped: bool,
    /// Set-user-ID programs run without their privileges (`no_new_privs`).
    pub no_new_privileges: bool,
}

/// What happens to the network of a launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NetworkEnforcement {
    /// Not restricted (the settings say `any`).
    Open,
    /// No TCP connection out and no TCP port opened (UDP is not filtered).
    Blocked,
    /// TCP connections only to these ports, on any host (the kernel filters ports, not hosts).
    Ports(Vec<u16>),
    /// The settings restrict it but this kernel cannot (Landlock before ABI 4).
    NotEnforced,
}

impl Enforcement {
    /// Whether the launch is sandboxed at all.
    pub fn in_force(&self) -> bool {
        self.filesystem
    }
}

/// A ruleset ready for the child. Keep it alive until the child has been spawned.
#[derive(Debug)]
pub struct Prepared {
    #[cfg(target_os = "linux")]
    fd: Option<std::os::fd::OwnedFd>,
    pub enforcement: Enforcement,
}

/// Build the ruleset for `plan` with what the running kernel offers.
#[cfg(target_os = "linux")]
pub fn prepare(plan: &Plan) -> io::Result<Prepared> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
        Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
    };

    let abi_number = crate::kernel::landlock_abi();
    let abi = ABI::from(abi_number as i32);
    let not_in_force = Enforcement {
        abi: abi_number,
        filesystem: false,
        network: match plan.network {
            Network::Any => NetworkEnforcement::Open,
            _ => NetworkEnforcement::NotEnforced,
        },
        scoped: false,
        no_new_privileges: true,
    };
    if abi == ABI::Unsupported {
        return Ok(Prepared {
            fd: None,
            enforcement: not_in_force,
        });
    }
    let failed = |e: landlock::RulesetError| io::Error::other(format!("Landlock: {e}"));
    let restrict_network = !plan.network.is_any() && abi_number >= 4;
    let scoped = abi_number >= 6;

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(failed)?;
    if restrict_network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(failed)?;
    }
    if scoped {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(failed)?;
    }
    let mut created = ruleset.create().map_err(failed)?;
    let grants = plan
        .read
        .iter()
        .map(|g| (g, AccessFs::from_read(abi)))
        .chain(plan.write.iter().map(|g| (g, AccessFs::from_all(abi))));
    for (grant, access) in grants {
        // A path that went away since the plan grants nothing.
        let Ok(fd) = PathFd::new(&grant.path) else {
            continue;
        };
        let access = if grant.path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(failed)?;
    }
    let ports = plan.network.ports();
    if restrict_network {
        for port in &ports {
            created = created
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(failed)?;
        }
        if let Some(port) = plan.listen {
            created = created
                .add_rule(NetPort::new(port, AccessNet::BindTcp))
                .map_err(failed)?;
        }
    }
    let fd: Option<std::os::fd::OwnedFd> = created.into();
    let network = match (&plan.network, restrict_network) {
        (Network::Any, _) => NetworkEnforcement::Open,
        (_, false) => NetworkEnforcement::NotEnforced,
        (Network::None, true) => NetworkEnforcement::Blocked,
        (Network::Hosts(_), true) => NetworkEnforcement::Ports(ports),
    };
    Ok(Prepared {
        enforcement: Enforcement {
            abi: abi_number,
            filesystem: fd.is_some(),
            network,
            scoped: scoped && fd.is_some(),
            no_new_privileges: true,
        },
        fd,
    })
}

/// Without Landlock (not Linux) nothing is enforced.
#[cfg(not(target_os = "linux"))]
pub fn prepare(plan: &Plan) -> io::Result<Prepared> {
    Ok(Prepared {
        enforcement: Enforcement {
            abi: 0,
            filesystem: false,
            network: match plan.network {
                Network::Any => NetworkEnforcement::Open,
                _ => NetworkEnforcement::NotEnforced,
            },
            scoped: false,
            no_new_privileges: false,
        },
    })
}

impl Prepared {
    /// What the child runs between fork and exec: `no_new_privs`, then the ruleset. Only
    /// async-signal-safe system calls; an error stops the launch (the server never runs
    /// unconfined when a sandbox was planned and the kernel has one).
    #[cfg(target_os = "linux")]
    pub fn child_setup(&self) -> impl FnMut() -> io::Result<()> + Send + Sync + 'static {
        use std::os::fd::AsRawFd;
        let fd = self.fd.as_ref().map_or(-1, |fd| fd.as_raw_fd());
        move || {
            // SAFETY: plain system calls on an fd the parent keeps open until the spawn returns.
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if fd >= 0 && libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        }
    }
}
