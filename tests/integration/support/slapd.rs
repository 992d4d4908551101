//! A real OpenLDAP server (Debian's `slapd`) for the LDAP login tests: a private child process with its
//! own slapd.conf, database, certificates and loopback ports in a temporary directory, loaded with a
//! small directory by `ldapadd` (package ldap-utils); the system's service and files are never touched.
//!
//! The directory: a service account `cn=reader`, users `alice` (groups admins and ops), `bob` (dev) and
//! `carol` (none), and a person whose uid is `*`, all under `dc=example,dc=com`. The memberof overlay
//! gives users their `memberOf` values, as Active Directory does, and a referral under the people makes
//! every user search answer a continuation reference besides the entries, as Active Directory's do.

use super::nginx::free_port;
use super::Context;
use libtest_mimic::Failed;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const SLAPD: &str = "/usr/sbin/slapd";
pub const LDAPADD: &str = "ldapadd";
pub const BASE: &str = "dc=example,dc=com";
pub const PEOPLE: &str = "ou=people,dc=example,dc=com";
pub const GROUPS: &str = "ou=groups,dc=example,dc=com";
pub const READER: &str = "cn=reader,dc=example,dc=com";
pub const READER_PASSWORD: &str = "reader-pw";
/// Each user's password: `<uid>-pw`.
pub const USERS: [&str; 3] = ["alice", "bob", "carol"];
const ROOT: &str = "cn=admin,dc=example,dc=com";
const ROOT_PASSWORD: &str = "root-pw";

/// Why the LDAP tests cannot run here, if they cannot.
pub fn availability() -> Result<(), String> {
    match Command::new(SLAPD).arg("-VV").stderr(Stdio::null()).status() {
        Ok(status) if status.success() => {}
        _ => return Err(format!("{SLAPD} is not installed (apt-get install slapd ldap-utils)")),
    }
    match Command::new(LDAPADD).arg("-VV").stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{LDAPADD}: {e} (apt-get install ldap-utils)")),
    }
}

pub struct Slapd {
    /// `ldap://127.0.0.1:PORT` (StartTLS offered).
    pub ldap_url: String,
    /// `ldaps://127.0.0.1:PORT`.
    pub ldaps_url: String,
    /// The PEM of the CA that signed the server's certificate (for 127.0.0.1 and localhost).
    pub ca_file: PathBuf,
    process: Child,
    _dir: tempfile::TempDir,
}

impl Slapd {
    pub async fn start() -> Result<Slapd, Failed> {
        let dir = tempfile::tempdir().context("slapd dir")?;
        let root = dir.path().to_path_buf();
        std::fs::create_dir(root.join("db")).context("slapd db dir")?;
        let ca_file = root.join("ca.pem");
        write_certificates(&root)?;
        let d = root.display();
        // mdb with a small map: the default reserves 10 MiB anyway, this keeps it explicit.
        let config = format!(
            "include /etc/ldap/schema/core.schema\n\
             include /etc/ldap/schema/cosine.schema\n\
             include /etc/ldap/schema/inetorgperson.schema\n\
             modulepath /usr/lib/ldap\n\
             moduleload back_mdb\n\
             moduleload memberof\n\
             pidfile {d}/slapd.pid\n\
             TLSCACertificateFile {d}/ca.pem\n\
             TLSCertificateFile {d}/server.pem\n\
             TLSCertificateKeyFile {d}/server.key\n\
             database mdb\n\
             maxsize 10485760\n\
             suffix \"{BASE}\"\n\
             rootdn \"{ROOT}\"\n\
             rootpw {ROOT_PASSWORD}\n\
             directory {d}/db\n\
             overlay memberof\n"
        );
        std::fs::write(root.join("slapd.conf"), config).context("slapd.conf")?;
        let (port, tls_port) = (free_port()?, free_port()?);
        let (ldap_url, ldaps_url) =
            (format!("ldap://127.0.0.1:{port}"), format!("ldaps://127.0.0.1:{tls_port}"));
        // `-d 0`: stays in the foreground, so the child is slapd itself and stopping it stops the server.
        let process = Command::new(SLAPD)
            .arg("-f")
            .arg(root.join("slapd.conf"))
            .args(["-h", &format!("{ldap_url}/ {ldaps_url}/"), "-d", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(root.join("slapd.log")).context("slapd.log")?)
            .spawn()
            .context("start slapd")?;
        let slapd = Slapd { ldap_url, ldaps_url, ca_file, process, _dir: dir };
        slapd.load(&root).await?;
        Ok(slapd)
    }

    /// Loads the directory, retrying while slapd is still opening its ports.
    async fn load(&self, root: &std::path::Path) -> Result<(), Failed> {
        let ldif = root.join("data.ldif");
        std::fs::write(&ldif, directory()).context("data.ldif")?;
        let mut last = String::new();
        for _ in 0..100 {
            let output = Command::new(LDAPADD)
                // -M (ManageDsaIT): the referral is added as an entry, not followed.
                .args(["-x", "-M", "-H", &self.ldap_url, "-D", ROOT, "-w", ROOT_PASSWORD, "-f"])
                .arg(&ldif)
                .output()
                .context("ldapadd")?;
            if output.status.success() {
                return Ok(());
            }
            last = String::from_utf8_lossy(&output.stderr).into_owned();
            // Only "cannot connect yet" is worth a retry; anything else would fail the same way again.
            if !last.contains("Can't contact LDAP server") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let log = std::fs::read_to_string(root.join("slapd.log")).unwrap_or_default();
        Err(format!("loading the directory failed: {last}\nslapd.log:\n{log}").into())
    }
}

impl Drop for Slapd {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// The DN of a user.
pub fn user_dn(uid: &str) -> String {
    format!("uid={uid},{PEOPLE}")
}

fn directory() -> String {
    let mut ldif = format!(
        "dn: {BASE}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example\n\n\
         dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n\
         dn: {GROUPS}\nobjectClass: organizationalUnit\nou: groups\n\n\
         dn: {READER}\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: reader\nuserPassword: {READER_PASSWORD}\n\n"
    );
    // A person whose uid is `*`: a filter built by pasting the name would match everyone for it.
    for uid in USERS.iter().chain(&["*"]) {
        let password = format!("{uid}-pw");
        ldif.push_str(&format!("dn: {}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid}\nsn: {uid}\nuserPassword: {password}\n\n", user_dn(uid)));
    }
    ldif.push_str(&format!(
        "dn: ou=elsewhere,{PEOPLE}\nobjectClass: referral\nobjectClass: extensibleObject\nou: elsewhere\nref: ldap://directory.invalid/ou=elsewhere,{PEOPLE}\n\n"
    ));
    for (group, members) in [("admins", &["alice"][..]), ("ops", &["alice"]), ("dev", &["bob"])] {
        ldif.push_str(&format!("dn: cn={group},{GROUPS}\nobjectClass: groupOfNames\ncn: {group}\n"));
        for member in members {
            ldif.push_str(&format!("member: {}\n", user_dn(member)));
        }
        ldif.push('\n');
    }
    ldif
}

/// A throwaway CA and a server certificate it signs for 127.0.0.1 and localhost.
fn write_certificates(root: &std::path::Path) -> Result<(), Failed> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose};
    let fail = |e: rcgen::Error| Failed::from(format!("certificate: {e}"));
    let ca_key = KeyPair::generate().map_err(fail)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    ca_params.distinguished_name.push(DnType::CommonName, "xxl-job LDAP test CA");
    let ca = ca_params.self_signed(&ca_key).map_err(fail)?;
    let key = KeyPair::generate().map_err(fail)?;
    let mut params =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).map_err(fail)?;
    params.distinguished_name.push(DnType::CommonName, "localhost");
    let cert = params.signed_by(&key, &ca, &ca_key).map_err(fail)?;
    for (name, pem) in [("ca.pem", ca.pem()), ("server.pem", cert.pem()), ("server.key", key.serialize_pem())]
    {
        std::fs::write(root.join(name), pem).context(name)?;
    }
    Ok(())
}
