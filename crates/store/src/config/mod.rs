//! The user's installed servers: the server model and the store that keeps them on disk.

mod argv;
mod model;
mod paths;
mod store;
mod tools;

pub use argv::{LaunchArg, is_container_runtime, plan_args, secrets_on_argv};
pub use model::{
    Auth, BundleOrigin, ClientAuthMethod, ConfigValue, DependencyPin, ENV_REF_OPEN, EnvTemplate,
    HeadersHelper, LocalLaunch, OAuthGrant, OAuthSettings, RegistryOrigin, SECRET_ARG_OPEN,
    SecretRef, ServerConfig, Source, TransportKind, arg_secret_names, is_launch_env,
    is_loopback_host, secret_arg, validate_env_key, validate_header_name, validate_name,
    validate_remote_url,
};
pub use paths::{config_dir, default_config_dir};
pub use store::{CONFIG_FILE, CONFIG_VERSION, Config, ConfigError, ConfigStore};
pub use tools::{NewTools, Review, StateReason, ToolPolicy, ToolState};
